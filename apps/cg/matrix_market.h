// Matrix Market files (https://math.nist.gov/MatrixMarket/formats.html), the subset aiac reads
// and writes: real matrices in coordinate format, `general` or `symmetric` (the upper triangle
// is filled in), and real vectors in `array` format (n x 1) or coordinate format.
// Every problem is reported as "FILE:LINE: what".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace aiac::cg {

struct Triplet {
  int row, col;  // 0-based
  double value;
};

struct CoordinateMatrix {
  int rows = 0, cols = 0;
  std::vector<Triplet> entries;  // symmetric files expanded; duplicates kept (they add up)
};

Result<CoordinateMatrix> ReadMatrixMarket(const std::string& path);
// A vector: array n x 1, or coordinate n x 1 (missing entries are 0).
Result<std::vector<double>> ReadMatrixMarketVector(const std::string& path);
// Writes x as "array real general", n x 1, full precision.
Status WriteMatrixMarketVector(const std::string& path, const std::vector<double>& x);

}  // namespace aiac::cg
