// For HugePagesTest: calls ReexecWithHugePageMalloc first, as the daemon and the spawner do, then
// prints its process id, its GLIBC_TUNABLES and whether the re-execution's guard is left, one
// per line, and whether it was given the argument "again" (the arguments survive).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/huge_pages.h"

int main(int argc, char** argv) {
  aiac::ReexecWithHugePageMalloc(argv);
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  std::printf("pid %d\n", static_cast<int>(::getpid()));
  std::printf("tunables %s\n", tunables ? tunables : "(none)");
  std::printf("guard %s\n", std::getenv("AIAC_REEXECUTED_FOR_HUGE_PAGES") ? "left" : "gone");
  std::printf("args %s\n", argc > 1 && std::strcmp(argv[1], "again") == 0 ? "kept" : "lost");
  return 0;
}
