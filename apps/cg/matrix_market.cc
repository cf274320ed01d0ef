#include "apps/cg/matrix_market.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <thread>
#include <tuple>
#include <utility>

#include "core/huge_pages.h"
#include "core/memory_budget.h"

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
  if (object != "matrix")
    return InvalidArgument(path + ":1: object '" + object + "' is not supported (matrix)");
  if (h.format != "coordinate" && h.format != "array") {
    return InvalidArgument(path + ":1: format '" + h.format + "' is not coordinate or array");
  }
  if (h.field != "real" && h.field != "integer" && h.field != "double") {
    return InvalidArgument(path + ":1: field '" + h.field + "' is not supported (real or integer)");
  }
  if (h.symmetry != "general" && h.symmetry != "symmetric") {
    return InvalidArgument(path + ":1: symmetry '" + h.symmetry +
                           "' is not supported (general or symmetric)");
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

std::string At(const std::string& path, int line_no) {
  return path + ":" + std::to_string(line_no) + ": ";
}

// The entries of a coordinate file are parsed straight from memory, with std::from_chars and no
// allocation per line, in line-aligned chunks on up to hardware_concurrency threads: reading an
// 800,000-row banded system (10 M lines) took 8-17 s with a stream per line.
constexpr size_t kMinChunkBytes = size_t{8} << 20;

// Runs body(k) for k in [0, parts) on up to `parts` threads (the caller's being one).
template <typename Body>
void InParallel(size_t parts, const Body& body) {
  std::vector<std::jthread> workers;
  for (size_t k = 1; k < parts; ++k) workers.emplace_back([&body, k] { body(k); });
  body(0);
}

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// A row or column index: a loop over its digits, a third of the time std::from_chars took here
// (10 M lines of an 800,000-row system); from_chars for more digits than an index can have.
bool ParseIndex(const char*& p, const char* end, long long& out) {
  bool negative = false;
  if (p < end && (*p == '+' || *p == '-')) negative = *p++ == '-';
  const char* first = p;
  long long v = 0;
  for (; p < end && static_cast<unsigned>(*p - '0') < 10; ++p) {
    if (p - first < 18) v = v * 10 + (*p - '0');  // (never past a long long)
  }
  if (p == first) return false;
  if (p - first > 18) {  // from_chars says whether it fits
    auto r = std::from_chars(first, p, v);
    if (r.ec != std::errc()) return false;
  }
  out = negative ? -v : v;
  return true;
}

// Parses the line [p, end) (no newline) as 'ROW COL VALUE' ('VALUE' only when `value_only`).
// Returns false when it is not exactly that; `blank` says the line holds no data (blank or a
// comment) and is to be skipped.
bool ParseEntry(const char* p, const char* end, bool value_only, long long& i, long long& j,
                double& v, bool& blank) {
  while (p < end && IsBlank(*p)) ++p;
  blank = p == end || *p == '%';
  if (blank) return true;
  // After a number: the end of the line or blanks.
  auto ends_number = [&] {
    if (p < end && !IsBlank(*p)) return false;
    while (p < end && IsBlank(*p)) ++p;
    return true;
  };
  if (!value_only &&
      !(ParseIndex(p, end, i) && ends_number() && ParseIndex(p, end, j) && ends_number()))
    return false;
  if (p < end && *p == '+') ++p;  // from_chars takes no '+'; the format allows it
  auto r = std::from_chars(p, end, v);
  if (r.ec != std::errc()) return false;
  p = r.ptr;
  return ends_number() && p == end;
}

// The 1-based line number of offset `at` in `text`, whose first line is `first_line`.
int LineAt(std::string_view text, size_t at, int first_line) {
  return first_line + static_cast<int>(std::count(
                          text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
}

// What one chunk of entry lines holds, or the first problem in it (at byte `error_at`). The
// entries are the file's: a symmetric file's lower triangle, mirrored only as the matrix is
// assembled (half the memory to fill while parsing).
struct Chunk {
  size_t begin = 0, end = 0;
  std::vector<Triplet> entries;
  size_t off_diagonal = 0;  // entries with row != col
  std::string error;
  size_t error_at = 0;
};

// `expected`: about how many entries the chunk holds (room is made for them at once).
void ParseChunk(std::string_view text, Chunk& c, int rows, int cols, bool symmetric,
                size_t expected) {
  c.entries.reserve(expected);
  AdviseHugePages(c.entries.data(), c.entries.capacity() * sizeof(Triplet));
  size_t at = c.begin;
  while (at < c.end) {
    size_t eol = text.find('\n', at);
    if (eol == std::string_view::npos || eol > c.end) eol = c.end;
    long long i = 0, j = 0;
    double v = 0;
    bool blank = false;
    const bool ok = ParseEntry(text.data() + at, text.data() + eol, false, i, j, v, blank);
    if (!blank) {
      std::string error;
      if (!ok) {
        error = "entry must be 'ROW COL VALUE'";
      } else if (i < 1 || i > rows || j < 1 || j > cols) {
        error = "entry (" + std::to_string(i) + ", " + std::to_string(j) + ") is outside the " +
                std::to_string(rows) + " x " + std::to_string(cols) + " matrix";
      } else if (!std::isfinite(v)) {
        error = "value is not a finite number";
      } else if (symmetric && j > i) {
        error = "symmetric file has an entry above the diagonal";
      }
      if (!error.empty()) {
        c.error = std::move(error);
        c.error_at = at;
        return;
      }
      c.off_diagonal += i != j;
      c.entries.push_back({static_cast<int>(i - 1), static_cast<int>(j - 1), v});
    }
    at = eol + 1;
  }
}

// Offset of the start of the `k`-th (0-based) data line of `text` from `from`, or npos.
size_t DataLine(std::string_view text, size_t from, long long k) {
  for (size_t at = from; at < text.size();) {
    size_t eol = text.find('\n', at);
    if (eol == std::string_view::npos) eol = text.size();
    long long i, j;
    double v;
    bool blank = false;
    ParseEntry(text.data() + at, text.data() + eol, false, i, j, v, blank);
    if (!blank && k-- == 0) return at;
    at = eol + 1;
  }
  return std::string_view::npos;
}

// A file's bytes mapped read-only (so that parsing needs no copy of them: on an 800,000-row
// system the copy into fresh memory took 0.1-0.15 s); empty for an empty file or when the file
// cannot be mapped (`ok()` says which). As with any mapping, a file cut short by another process
// while it is parsed would end the reader with SIGBUS; rewriting one in place is not supported.
class MappedText {
 public:
  explicit MappedText(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st {};
    if (::fstat(fd, &st) == 0) {
      size_ = static_cast<size_t>(st.st_size);
      if (size_ == 0) {
        ok_ = true;
      } else {
        // MAP_POPULATE: the pages are mapped in one go instead of one fault per page.
        void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
        if (p != MAP_FAILED) {
          data_ = static_cast<const char*>(p);
          ok_ = true;
        }
      }
    }
    ::close(fd);
  }
  MappedText(const MappedText&) = delete;
  MappedText& operator=(const MappedText&) = delete;
  ~MappedText() {
    if (data_ != nullptr) ::munmap(const_cast<char*>(data_), size_);
  }
  bool ok() const { return ok_; }
  // The bytes from `offset` on (none past the end).
  std::string_view From(size_t offset) const {
    return offset >= size_ || data_ == nullptr ? std::string_view()
                                               : std::string_view(data_ + offset, size_ - offset);
  }

 private:
  const char* data_ = nullptr;
  size_t size_ = 0;
  bool ok_ = false;
};

// A coordinate file's entries as its chunks parsed them (in file order), checked: the count
// announced, every index in range.
struct ParsedEntries {
  int rows = 0, cols = 0;
  bool symmetric = false;  // each off-diagonal entry stands for two
  size_t stored = 0;       // entries once symmetric ones are mirrored
  std::vector<Chunk> chunks;
};

// f(row, col, value) for each stored entry of `c`: a symmetric file's off-diagonal entries
// twice, the mirror right after the entry.
template <typename F>
void ForEachStored(const Chunk& c, bool symmetric, const F& f) {
  for (const Triplet& e : c.entries) {
    f(e.row, e.col, e.value);
    if (symmetric && e.row != e.col) f(e.col, e.row, e.value);
  }
}

// The size line, checked against what the file can hold and what this host can spare; `m` gets
// the sizes and the symmetry. Returns the entries announced.
Result<long long> ReadSizeLine(std::ifstream& in, const std::string& path, const Header& header,
                               int& line_no, ParsedEntries& m) {
  std::string line;
  if (!NextDataLine(in, line, line_no)) return InvalidArgument(path + ": no size line");
  long long rows = 0, cols = 0, nnz = -1;
  std::istringstream s(line);
  std::string extra;
  if (!(s >> rows >> cols >> nnz) || (s >> extra) || rows <= 0 || cols <= 0 || nnz < 0) {
    return InvalidArgument(At(path, line_no) +
                           "size line must be 'ROWS COLS ENTRIES' with positive sizes");
  }
  if (rows > kMaxMatrixRows || cols > kMaxMatrixRows) {
    return InvalidArgument(At(path, line_no) + "matrix of " + std::to_string(rows) + " x " +
                           std::to_string(cols) + " is larger than the " +
                           std::to_string(kMaxMatrixRows) + " rows aiac handles");
  }
  m.rows = static_cast<int>(rows);
  m.cols = static_cast<int>(cols);
  m.symmetric = header.symmetry == "symmetric";
  if (m.symmetric && m.rows != m.cols)
    return InvalidArgument(path + ": a symmetric matrix must be square");
  const auto bytes_left = FileSize(path) - static_cast<long long>(in.tellg());
  if (nnz > bytes_left / 6) {
    return InvalidArgument(At(path, line_no) + std::to_string(nnz) +
                           " entries announced, but the " + std::to_string(bytes_left) +
                           " bytes left in the file hold at most " +
                           std::to_string(bytes_left / 6));
  }
  if (rows == cols && nnz < rows) {
    return InvalidArgument(At(path, line_no) + "only " + std::to_string(nnz) + " entries for " +
                           std::to_string(rows) +
                           " rows: some diagonal entry is missing, and CG needs every one");
  }
  const double stored = static_cast<double>(m.symmetric ? 2 * nnz : nnz);
  AIAC_RETURN_IF_ERROR(CheckFitsInMemory(
      path + " (" + std::to_string(rows) + " rows, " + std::to_string(nnz) + " entries)",
      stored * kBytesPerEntry + static_cast<double>(rows) * kBytesPerRow));
  return nnz;
}

// The data's chunks: about equal pieces, one per core (at least kMinChunkBytes each), each
// ending at a newline.
std::vector<Chunk> SplitIntoChunks(std::string_view text) {
  const size_t threads = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 16);
  const size_t pieces = std::clamp<size_t>(text.size() / kMinChunkBytes, 1, threads);
  std::vector<Chunk> chunks(pieces);
  for (size_t k = 0, at = 0; k < pieces; ++k) {
    chunks[k].begin = at;
    size_t end = k + 1 == pieces ? text.size() : std::max(at, text.size() * (k + 1) / pieces);
    if (end < text.size()) {
      const size_t eol = text.find('\n', end);
      end = eol == std::string_view::npos ? text.size() : eol + 1;
    }
    chunks[k].end = end;
    at = end;
  }
  return chunks;
}

// The first problem in file order: a chunk's bad line, or an entry count other than `nnz`.
Status CheckEntries(const ParsedEntries& m, std::string_view text, long long nnz,
                    const std::string& path, int first_line) {
  long long found = 0;
  for (const Chunk& c : m.chunks) {
    if (!c.error.empty()) {
      if (found + static_cast<long long>(c.entries.size()) >= nnz && found <= nnz) {
        // The bad line comes after the announced entries: that is the first problem.
        if (size_t extra = DataLine(text, c.begin, nnz - found); extra <= c.error_at) {
          return InvalidArgument(At(path, LineAt(text, extra, first_line)) +
                                 "more entries than announced");
        }
      }
      return InvalidArgument(At(path, LineAt(text, c.error_at, first_line)) + c.error);
    }
    found += static_cast<long long>(c.entries.size());
  }
  if (found < nnz) {
    return InvalidArgument(path + ": " + std::to_string(nnz) + " entries announced, " +
                           std::to_string(found) + " found");
  }
  if (found > nnz) {
    return InvalidArgument(At(path, LineAt(text, DataLine(text, 0, nnz), first_line)) +
                           "more entries than announced");
  }
  return Status::Ok();
}

Result<ParsedEntries> ParseCoordinateFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("cannot read matrix file " + path);
  int line_no = 0;
  AIAC_ASSIGN_OR_RETURN(const Header header, ReadHeader(in, path, line_no));
  if (header.format != "coordinate")
    return InvalidArgument(path + ": the matrix must be in coordinate format");
  ParsedEntries m;
  AIAC_ASSIGN_OR_RETURN(const long long nnz, ReadSizeLine(in, path, header, line_no, m));
  // The rest of the file, mapped (read into memory where it cannot be); then chunks that end at
  // a newline, parsed in parallel.
  const auto data_at = static_cast<long long>(in.tellg());
  const auto bytes_left = FileSize(path) - data_at;
  MappedText mapped(path);
  std::string copy;
  std::string_view text;
  if (mapped.ok()) {
    text = mapped.From(static_cast<size_t>(data_at));
  } else {
    copy.assign(static_cast<size_t>(std::max<long long>(bytes_left, 0)), '\0');
    in.read(copy.data(), static_cast<std::streamsize>(copy.size()));
    copy.resize(static_cast<size_t>(in.gcount()));
    text = copy;
  }
  m.chunks = SplitIntoChunks(text);
  InParallel(m.chunks.size(), [&](size_t k) {
    const Chunk& c = m.chunks[k];
    const double share = static_cast<double>(c.end - c.begin) /
                         static_cast<double>(std::max<size_t>(text.size(), 1));
    ParseChunk(text, m.chunks[k], m.rows, m.cols, m.symmetric,
               static_cast<size_t>(1.02 * share * static_cast<double>(nnz)) + 64);
  });
  // Problems are reported in file order: the first chunk with one, or the count.
  AIAC_RETURN_IF_ERROR(CheckEntries(m, text, nnz, path, line_no + 1));
  for (const Chunk& c : m.chunks) m.stored += c.entries.size() + (m.symmetric ? c.off_diagonal : 0);
  return m;
}

}  // namespace

Result<CoordinateMatrix> ReadMatrixMarket(const std::string& path) {
  AIAC_ASSIGN_OR_RETURN(auto parsed, ParseCoordinateFile(path));
  CoordinateMatrix m;
  m.rows = parsed.rows;
  m.cols = parsed.cols;
  m.entries.reserve(parsed.stored);
  for (Chunk& c : parsed.chunks) {
    ForEachStored(c, parsed.symmetric, [&](int row, int col, double value) {
      m.entries.push_back({row, col, value});
    });
    std::vector<Triplet>().swap(c.entries);
  }
  return m;
}

namespace {

// Compressed rows straight from the chunks (a counting sort by row), instead of Eigen's
// setFromTriplets, which goes through a column-major copy and a transpose: on an 800,000-row
// banded system this took 0.48 s of the read, with three more copies of every entry. Each group
// of consecutive chunks counts its entries per row, then writes them at its own place in each
// row (after the earlier groups' entries of that row): both passes run a thread per group. A
// group's counts take 4 bytes a row: there are at most as many groups as entries per row, so
// the counts never outweigh the entries (a wide matrix of few entries gets one group). The
// chunks' entries are freed as they are used.
void FillRows(ParsedEntries& parsed, int* starts, int* cols, double* values) {
  std::vector<Chunk>& chunks = parsed.chunks;
  const auto rows = static_cast<size_t>(parsed.rows);
  const size_t groups =
      std::clamp<size_t>(parsed.stored / std::max<size_t>(rows, 1), 1, chunks.size());
  auto each_entry_of = [&](size_t g, const auto& f) {
    for (size_t k = chunks.size() * g / groups; k < chunks.size() * (g + 1) / groups; ++k) {
      ForEachStored(chunks[k], parsed.symmetric, f);
    }
  };
  std::vector<std::vector<int>> next(groups);
  InParallel(groups, [&](size_t g) {
    next[g].assign(rows, 0);
    each_entry_of(g, [&](int row, int, double) { ++next[g][static_cast<size_t>(row)]; });
  });
  int at = 0;
  for (size_t r = 0; r < rows; ++r) {
    starts[r] = at;
    for (auto& n : next) at += std::exchange(n[r], at);
  }
  starts[rows] = at;
  InParallel(groups, [&](size_t g) {
    each_entry_of(g, [&](int row, int col, double value) {
      const int to = next[g][static_cast<size_t>(row)]++;
      cols[to] = col;
      values[to] = value;
    });
  });
  for (Chunk& c : chunks) std::vector<Triplet>().swap(c.entries);
}

// One row's entries [begin, end) by column, duplicates summed (a short row by insertion, a long
// one, a dense row of an arrow matrix say, by a stable sort: equal columns keep the file's order
// either way). Returns how many entries remain.
int SortRow(int begin, int end, int* cols, double* values,
            std::vector<std::pair<int, double>>& scratch) {
  constexpr int kShortRow = 64;
  if (end - begin > kShortRow) {
    scratch.clear();
    for (int x = begin; x < end; ++x) scratch.emplace_back(cols[x], values[x]);
    std::stable_sort(scratch.begin(), scratch.end(),
                     [](const auto& p, const auto& q) { return p.first < q.first; });
    for (int x = begin; x < end; ++x)
      std::tie(cols[x], values[x]) = scratch[static_cast<size_t>(x - begin)];
  }
  for (int x = begin + 1; x < end; ++x) {
    const int col = cols[x];
    const double value = values[x];
    int y = x;
    for (; y > begin && cols[y - 1] > col; --y) {
      cols[y] = cols[y - 1];
      values[y] = values[y - 1];
    }
    cols[y] = col;
    values[y] = value;
  }
  int last = begin;
  for (int x = begin + 1; x < end; ++x) {
    if (cols[x] == cols[last]) {
      values[last] += values[x];
    } else if (++last != x) {
      cols[last] = cols[x];
      values[last] = values[x];
    }
  }
  return end > begin ? last - begin + 1 : 0;
}

// Duplicates summed leave holes between rows: closed (rare; a file without duplicates skips
// this). Returns the entries kept.
int CloseHoles(size_t rows, const std::vector<int>& kept, int* starts, int* cols, double* values) {
  int write = 0;
  bool holes = false;
  for (size_t r = 0; r < rows; ++r) {
    const int begin = starts[r];
    holes |= kept[r] != starts[r + 1] - begin;
    if (holes && write != begin) {
      std::memmove(cols + write, cols + begin, static_cast<size_t>(kept[r]) * sizeof(int));
      std::memmove(values + write, values + begin, static_cast<size_t>(kept[r]) * sizeof(double));
    }
    starts[r] = write;
    write += kept[r];
  }
  starts[rows] = write;
  return write;
}

}  // namespace

Result<Eigen::SparseMatrix<double, Eigen::RowMajor, int>> ReadMatrixMarketRows(
    const std::string& path) {
  AIAC_ASSIGN_OR_RETURN(ParsedEntries parsed, ParseCoordinateFile(path));
  const auto rows = static_cast<size_t>(parsed.rows);
  Eigen::SparseMatrix<double, Eigen::RowMajor, int> a(parsed.rows, parsed.cols);
  if (parsed.stored > static_cast<size_t>(std::numeric_limits<int>::max())) {
    return InvalidArgument(path + ": " + std::to_string(parsed.stored) +
                           " stored entries is more than aiac handles");
  }
  const size_t stored = parsed.stored;
  a.resizeNonZeros(static_cast<Eigen::Index>(stored));
  int* starts = a.outerIndexPtr();
  int* cols = a.innerIndexPtr();
  double* values = a.valuePtr();
  AdviseHugePages(cols, stored * sizeof(int));
  AdviseHugePages(values, stored * sizeof(double));
  FillRows(parsed, starts, cols, values);
  // Each row sorted on every core; `kept` says how many of a row's entries remain.
  std::vector<int> kept(rows);
  const size_t parts =
      std::clamp<size_t>(std::min<size_t>(std::thread::hardware_concurrency(), rows / 4096), 1, 16);
  InParallel(parts, [&](size_t k) {
    std::vector<std::pair<int, double>> scratch;
    for (size_t r = rows * k / parts; r < rows * (k + 1) / parts; ++r) {
      kept[r] = SortRow(starts[r], starts[r + 1], cols, values, scratch);
    }
  });
  const int write = CloseHoles(rows, kept, starts, cols, values);
  if (write != static_cast<int>(stored)) a.data().resize(write);
  return a;
}

Result<std::vector<double>> ReadMatrixMarketVector(const std::string& path, int64_t expected_rows) {
  std::ifstream in(path);
  if (!in) return NotFound("cannot read vector file " + path);
  int line_no = 0;
  AIAC_ASSIGN_OR_RETURN(auto header, ReadHeader(in, path, line_no));
  std::string line;
  if (!NextDataLine(in, line, line_no)) return InvalidArgument(path + ": no size line");
  std::istringstream size(line);
  long long rows = 0, cols = 0, nnz = 0;
  const bool array = header.format == "array";
  if (!(size >> rows >> cols) || (!array && !(size >> nnz)) || rows <= 0 || cols != 1 || nnz < 0) {
    return InvalidArgument(At(path, line_no) + "a vector must be ROWS x 1");
  }
  if (expected_rows >= 0 && rows != expected_rows) {
    return InvalidArgument(At(path, line_no) + "vector of " + std::to_string(rows) +
                           " rows for a matrix of " + std::to_string(expected_rows));
  }
  const long long count_announced = array ? rows : nnz;
  const auto bytes_left = FileSize(path) - static_cast<long long>(in.tellg());
  if (count_announced > bytes_left / (array ? 2 : 6) || rows > kMaxMatrixRows) {
    return InvalidArgument(At(path, line_no) + std::to_string(count_announced) +
                           " values announced, but the " + std::to_string(bytes_left) +
                           " bytes left in the file cannot hold them");
  }
  AIAC_RETURN_IF_ERROR(CheckFitsInMemory(path, static_cast<double>(rows) * 8));
  std::vector<double> x(static_cast<size_t>(rows), 0.0);
  const long long count = array ? rows : nnz;
  std::string text(static_cast<size_t>(std::max<long long>(bytes_left, 0)), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  long long k = 0;
  for (size_t at = 0; at < text.size();) {
    size_t eol = text.find('\n', at);
    if (eol == std::string::npos) eol = text.size();
    ++line_no;
    long long i = k + 1, j = 1;
    double v = 0;
    bool blank = false;
    const bool ok = ParseEntry(text.data() + at, text.data() + eol, array, i, j, v, blank);
    at = eol + 1;
    if (blank) continue;
    if (k == count) return InvalidArgument(At(path, line_no) + "more values than announced");
    if (!ok)
      return InvalidArgument(At(path, line_no) +
                             (array ? "expected one number" : "entry must be 'ROW COL VALUE'"));
    if (i < 1 || i > rows || j != 1)
      return InvalidArgument(At(path, line_no) + "entry is outside the vector");
    if (!std::isfinite(v))
      return InvalidArgument(At(path, line_no) + "value is not a finite number");
    x[static_cast<size_t>(i - 1)] += array ? v - x[static_cast<size_t>(i - 1)] : v;
    ++k;
  }
  if (k < count) {
    return InvalidArgument(path + ": " + std::to_string(count) + " values announced, " +
                           std::to_string(k) + " found");
  }
  return x;
}

Status WriteMatrixMarketVector(const std::string& path, const std::vector<double>& x) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) return IoError("cannot write " + path);
  out << "%%MatrixMarket matrix array real general\n" << x.size() << " 1\n";
  // The shortest text that reads back to the same double (std::to_chars): a tenth of the time
  // snprintf's "%.17g" took (0.05 s for 800,000 values), and shorter lines.
  std::string text;
  text.reserve(x.size() * 25);
  char buf[32];
  for (double v : x) {
    const auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
    text.append(buf, end);
    text += '\n';
  }
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.flush();
  if (!out) return IoError("cannot write " + path);
  return Status::Ok();
}

Status WriteMatrixMarketMatrix(const std::string& path,
                               const Eigen::SparseMatrix<double, Eigen::RowMajor, int>& a,
                               bool symmetric) {
  using Matrix = Eigen::SparseMatrix<double, Eigen::RowMajor, int>;
  std::ofstream out(path, std::ios::trunc);
  if (!out) return IoError("cannot write " + path);
  int64_t entries = 0;
  for (int i = 0; i < a.outerSize(); ++i) {
    for (Matrix::InnerIterator it(a, i); it && (!symmetric || it.col() <= i); ++it) ++entries;
  }
  out << "%%MatrixMarket matrix coordinate real " << (symmetric ? "symmetric" : "general") << "\n"
      << a.rows() << " " << a.cols() << " " << entries << "\n";
  char buf[80];
  for (int i = 0; i < a.outerSize(); ++i) {
    for (Matrix::InnerIterator it(a, i); it && (!symmetric || it.col() <= i); ++it) {
      const int len = std::snprintf(buf, sizeof buf, "%d %d %.17g\n", i + 1,
                                    static_cast<int>(it.col()) + 1, it.value());
      out.write(buf, len);
    }
  }
  out.flush();
  if (!out) return IoError("cannot write " + path);
  return Status::Ok();
}

}  // namespace aiac::cg
