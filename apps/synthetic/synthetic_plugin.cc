// The shared library entry point of the synthetic app.
#include "apps/synthetic/synthetic_app.h"

AIAC_DEFINE_APP(aiac::synthetic::SyntheticApp)
