// The shared library entry point of the cg app.
#include "apps/cg/cg_app.h"

AIAC_DEFINE_APP(aiac::cg::CgApp)
