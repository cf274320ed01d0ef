#include "core/huge_pages.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace aiac {

void AdviseHugePages(const void* data, size_t bytes) {
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  const auto begin = (reinterpret_cast<uintptr_t>(data) + kHuge - 1) & ~(kHuge - 1);
  const auto end = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(kHuge - 1);
  if (data == nullptr || end <= begin) return;
  // Advice only: where it is refused (no THP in this kernel) the pages stay small.
  ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

std::string WithHugePageMalloc(const std::string& tunables) {
  constexpr std::string_view kTunable = "glibc.malloc.hugetlb";
  if (tunables.find(kTunable) != std::string::npos) return tunables;
  return tunables + (tunables.empty() ? "" : ":") + std::string(kTunable) + "=1";
}

void ReexecWithHugePageMalloc(char** argv) {
  // Set across the exec only: should the loader drop the tunable (a set-user-ID program's
  // environment is cleaned), the program would otherwise execute itself again and again.
  constexpr const char* kGuard = "AIAC_REEXECUTED_FOR_HUGE_PAGES";
  if (std::getenv(kGuard)) {
    ::unsetenv(kGuard);
    return;
  }
  const char* set = std::getenv("GLIBC_TUNABLES");
  const std::string before = set ? set : "";
  const std::string tunables = WithHugePageMalloc(before);
  if (tunables == before) return;
  // The file itself, not /proc/self/exe: the process is named after the path it executes
  // (ps, pgrep -x).
  char self[4096];
  const ssize_t length = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (length <= 0 || static_cast<size_t>(length) >= sizeof self - 1) return;
  self[length] = '\0';
  if (::setenv("GLIBC_TUNABLES", tunables.c_str(), 1) != 0 || ::setenv(kGuard, "1", 1) != 0) return;
  ::execv(self, argv);
  // Not re-executed: go on as started, and leave the environment as it was for the children.
  ::unsetenv(kGuard);
  if (set) {
    ::setenv("GLIBC_TUNABLES", before.c_str(), 1);
  } else {
    ::unsetenv("GLIBC_TUNABLES");
  }
}

}  // namespace aiac
