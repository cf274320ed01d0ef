// A shared library that is no aiac app (no aiac_app_create), for the loader's refusal.
extern "C" __attribute__((visibility("default"))) int not_an_aiac_app() { return 0; }
