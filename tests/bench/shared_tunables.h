// A benchmark that compares aiac with another program (PETSc under mpiexec) runs both under the
// same glibc malloc tunables. aiac's daemon and spawner give themselves glibc.malloc.hugetlb=1
// unless GLIBC_TUNABLES names it (core/huge_pages.h), and huge pages sped PETSc's runs up as
// much (docs/results.md, 2026-12-06): so it is set here, where it is not set already, and every
// program started from here inherits it. Returns what they all run with, for the report.
#pragma once

#include <cstdlib>
#include <string>

#include "core/huge_pages.h"

namespace aiac::bench {

inline std::string ShareMallocTunables() {
  const char* set = std::getenv("GLIBC_TUNABLES");
  const std::string tunables = WithHugePageMalloc(set ? set : "");
  ::setenv("GLIBC_TUNABLES", tunables.c_str(), 1);
  return tunables;
}

}  // namespace aiac::bench
