// How the CG app writes numbers and rows in its one-line messages.
#pragma once

#include <cstdio>
#include <string>

namespace aiac::cg {

// "1.2e-05": short enough for one-line messages.
inline std::string FormatDouble(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// "rows 3..7" (1-based).
inline std::string RowsText(int lo, int hi) {
  return "rows " + std::to_string(lo + 1) + ".." + std::to_string(hi);
}

}  // namespace aiac::cg
