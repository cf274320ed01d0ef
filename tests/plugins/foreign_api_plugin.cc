// A plugin as another aiac would build it, for the loader's version check
// (tests/unit/runtime/plugin_load_test.cc): built twice, exporting API version
// FOREIGN_API_VERSION, or (NO_API_VERSION) no version at all, as plugins of API 8 and older did.
// Its factory must never be called: it aborts.
#include <cstdlib>

#ifndef NO_API_VERSION
extern "C" __attribute__((visibility("default"))) int aiac_app_api_version() {
  return FOREIGN_API_VERSION;
}
#endif
extern "C" __attribute__((visibility("default"))) void* aiac_app_create() { std::abort(); }
