#include "apps/cg/matrix_market.h"

#include "core/memory_budget.h"

#include <cmath>
#include <cstdio>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace aiac::cg {
namespace {

struct Header {
  std::string format;    // coordinate | array
  std::string field;     // real | integer | ...
  std::string symmetry;  // general | symmetric | ...
};

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Reads the banner and skips comments; leaves `in` at the size line.
Result<Header> ReadHeader(std::istream& in, const std::string& path, int& line_no) {
  std::string line;
  if (!std::getline(in, line)) return InvalidArgument(path + ": empty file, not Matrix Market");
  line_no = 1;
  std::istringstream banner(line);
  std::string tag, object;
  Header h;
  banner >> tag >> object >> h.format >> h.field >> h.symmetry;
  if (tag != "%%MatrixMarket") return InvalidArgument(path + ":1: missing %%MatrixMarket banner");
  object = Lower(object);
  h.format = Lower(h.format);
  h.field = Lower(h.field);
  h.symmetry = Lower(h.symmetry);
  if (object != "matrix") return InvalidArgument(path + ":1: object '" + object + "' is not supported (matrix)");
  if (h.format != "coordinate" && h.format != "array") {
    return InvalidArgument(path + ":1: format '" + h.format + "' is not coordinate or array");
  }
  if (h.field != "real" && h.field != "integer" && h.field != "double") {
    return InvalidArgument(path + ":1: field '" + h.field + "' is not supported (real or integer)");
  }
  if (h.symmetry != "general" && h.symmetry != "symmetric") {
    return InvalidArgument(path + ":1: symmetry '" + h.symmetry + "' is not supported (general or symmetric)");
  }
  return h;
}

// The next line that is not a comment or blank; false at end of file.
bool NextDataLine(std::istream& in, std::string& line, int& line_no) {
  while (std::getline(in, line)) {
    ++line_no;
    size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '%') continue;
    return true;
  }
  return false;
}

long long FileSize(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<long long>(size);
}

std::string At(const std::string& path, int line_no) { return path + ":" + std::to_string(line_no) + ": "; }

}  // namespace

Result<CoordinateMatrix> ReadMatrixMarket(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("cannot read matrix file " + path);
  int line_no = 0;
  auto header = ReadHeader(in, path, line_no);
  if (!header.ok()) return header.status();
  if (header->format != "coordinate") return InvalidArgument(path + ": the matrix must be in coordinate format");
  std::string line;
  if (!NextDataLine(in, line, line_no)) return InvalidArgument(path + ": no size line");
  CoordinateMatrix m;
  long long rows = 0, cols = 0, nnz = -1;
  {
    std::istringstream s(line);
    std::string extra;
    if (!(s >> rows >> cols >> nnz) || (s >> extra) || rows <= 0 || cols <= 0 || nnz < 0) {
      return InvalidArgument(At(path, line_no) + "size line must be 'ROWS COLS ENTRIES' with positive sizes");
    }
  }
  if (rows > kMaxMatrixRows || cols > kMaxMatrixRows) {
    return InvalidArgument(At(path, line_no) + "matrix of " + std::to_string(rows) + " x " + std::to_string(cols) +
                           " is larger than the " + std::to_string(kMaxMatrixRows) + " rows aiac handles");
  }
  m.rows = static_cast<int>(rows);
  m.cols = static_cast<int>(cols);
  const bool symmetric = header->symmetry == "symmetric";
  if (symmetric && m.rows != m.cols) return InvalidArgument(path + ": a symmetric matrix must be square");
  const auto bytes_left = FileSize(path) - static_cast<long long>(in.tellg());
  if (nnz > bytes_left / 6) {
    return InvalidArgument(At(path, line_no) + std::to_string(nnz) + " entries announced, but the " +
                           std::to_string(bytes_left) + " bytes left in the file hold at most " +
                           std::to_string(bytes_left / 6));
  }
  if (rows == cols && nnz < rows) {
    return InvalidArgument(At(path, line_no) + "only " + std::to_string(nnz) + " entries for " + std::to_string(rows) +
                           " rows: some diagonal entry is missing, and CG needs every one");
  }
  const double stored = static_cast<double>(symmetric ? 2 * nnz : nnz);
  AIAC_RETURN_IF_ERROR(CheckFitsInMemory(path + " (" + std::to_string(rows) + " rows, " + std::to_string(nnz) + " entries)",
                                         stored * kBytesPerEntry + static_cast<double>(rows) * kBytesPerRow));
  m.entries.reserve(static_cast<size_t>(stored));
  for (long long k = 0; k < nnz; ++k) {
    if (!NextDataLine(in, line, line_no)) {
      return InvalidArgument(path + ": " + std::to_string(nnz) + " entries announced, " + std::to_string(k) + " found");
    }
    std::istringstream s(line);
    long long i, j;
    double v;
    std::string extra;
    if (!(s >> i >> j >> v) || (s >> extra)) return InvalidArgument(At(path, line_no) + "entry must be 'ROW COL VALUE'");
    if (i < 1 || i > m.rows || j < 1 || j > m.cols) {
      return InvalidArgument(At(path, line_no) + "entry (" + std::to_string(i) + ", " + std::to_string(j) + ") is outside the " +
                             std::to_string(m.rows) + " x " + std::to_string(m.cols) + " matrix");
    }
    if (!std::isfinite(v)) return InvalidArgument(At(path, line_no) + "value is not a finite number");
    if (symmetric && j > i) return InvalidArgument(At(path, line_no) + "symmetric file has an entry above the diagonal");
    m.entries.push_back({static_cast<int>(i - 1), static_cast<int>(j - 1), v});
    if (symmetric && i != j) m.entries.push_back({static_cast<int>(j - 1), static_cast<int>(i - 1), v});
  }
  if (NextDataLine(in, line, line_no)) return InvalidArgument(At(path, line_no) + "more entries than announced");
  return m;
}

Result<std::vector<double>> ReadMatrixMarketVector(const std::string& path, int64_t expected_rows) {
  std::ifstream in(path);
  if (!in) return NotFound("cannot read vector file " + path);
  int line_no = 0;
  auto header = ReadHeader(in, path, line_no);
  if (!header.ok()) return header.status();
  std::string line;
  if (!NextDataLine(in, line, line_no)) return InvalidArgument(path + ": no size line");
  std::istringstream size(line);
  long long rows = 0, cols = 0, nnz = 0;
  const bool array = header->format == "array";
  if (!(size >> rows >> cols) || (!array && !(size >> nnz)) || rows <= 0 || cols != 1 || nnz < 0) {
    return InvalidArgument(At(path, line_no) + "a vector must be ROWS x 1");
  }
  if (expected_rows >= 0 && rows != expected_rows) {
    return InvalidArgument(At(path, line_no) + "vector of " + std::to_string(rows) + " rows for a matrix of " +
                           std::to_string(expected_rows));
  }
  const long long count_announced = array ? rows : nnz;
  const auto bytes_left = FileSize(path) - static_cast<long long>(in.tellg());
  if (count_announced > bytes_left / (array ? 2 : 6) || rows > kMaxMatrixRows) {
    return InvalidArgument(At(path, line_no) + std::to_string(count_announced) + " values announced, but the " +
                           std::to_string(bytes_left) + " bytes left in the file cannot hold them");
  }
  AIAC_RETURN_IF_ERROR(CheckFitsInMemory(path, static_cast<double>(rows) * 8));
  std::vector<double> x(static_cast<size_t>(rows), 0.0);
  const long long count = array ? rows : nnz;
  for (long long k = 0; k < count; ++k) {
    if (!NextDataLine(in, line, line_no)) {
      return InvalidArgument(path + ": " + std::to_string(count) + " values announced, " + std::to_string(k) + " found");
    }
    std::istringstream s(line);
    double v;
    long long i = k + 1, j = 1;
    std::string extra;
    if (!array && !(s >> i >> j)) return InvalidArgument(At(path, line_no) + "entry must be 'ROW COL VALUE'");
    if (!(s >> v) || (s >> extra)) return InvalidArgument(At(path, line_no) + "expected one number");
    if (i < 1 || i > rows || j != 1) return InvalidArgument(At(path, line_no) + "entry is outside the vector");
    if (!std::isfinite(v)) return InvalidArgument(At(path, line_no) + "value is not a finite number");
    x[static_cast<size_t>(i - 1)] += array ? v - x[static_cast<size_t>(i - 1)] : v;
  }
  return x;
}

Status WriteMatrixMarketVector(const std::string& path, const std::vector<double>& x) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) return IoError("cannot write " + path);
  out << "%%MatrixMarket matrix array real general\n" << x.size() << " 1\n";
  char buf[64];
  for (double v : x) {
    std::snprintf(buf, sizeof buf, "%.17g\n", v);
    out << buf;
  }
  out.flush();
  if (!out) return IoError("cannot write " + path);
  return Status::Ok();
}

}  // namespace aiac::cg
