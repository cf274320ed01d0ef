#include "apps/cg/matrix_market.h"

#include <gtest/gtest.h>

#include <Eigen/SparseCore>
#include <random>
#include <sstream>

#include "support/test_support.h"

namespace aiac::cg {
namespace {

using aiac::testing::TempDir;
using aiac::testing::WriteFile;
using Rows = Eigen::SparseMatrix<double, Eigen::RowMajor, int>;

// What ReadMatrixMarketRows must equal: Eigen's own assembly of ReadMatrixMarket's entries.
Rows FromTriplets(const CoordinateMatrix& m) {
  std::vector<Eigen::Triplet<double>> t;
  for (const auto& e : m.entries) t.emplace_back(e.row, e.col, e.value);
  Rows a(m.rows, m.cols);
  a.setFromTriplets(t.begin(), t.end());
  a.makeCompressed();
  return a;
}

// Same rows, same columns in the same order, same values (exactly: the tests' values add up
// exactly in any order).
void ExpectSameRows(const Rows& got, const Rows& want) {
  ASSERT_EQ(got.rows(), want.rows());
  ASSERT_EQ(got.cols(), want.cols());
  ASSERT_EQ(got.nonZeros(), want.nonZeros());
  ASSERT_TRUE(got.isCompressed());
  for (Eigen::Index r = 0; r <= want.rows(); ++r)
    ASSERT_EQ(got.outerIndexPtr()[r], want.outerIndexPtr()[r]) << r;
  for (Eigen::Index k = 0; k < want.nonZeros(); ++k) {
    ASSERT_EQ(got.innerIndexPtr()[k], want.innerIndexPtr()[k]) << k;
    ASSERT_EQ(got.valuePtr()[k], want.valuePtr()[k]) << k;
  }
}

TEST(MatrixMarketTest, GeneralCoordinateMatrix) {
  TempDir dir;
  WriteFile(dir / "a.mtx",
            "%%MatrixMarket matrix coordinate real general\n% a comment\n\n3 3 4\n1 1 4.0\n2 2 "
            "5\n3 3 6e0\n1 3 -1.5\n");
  auto m = ReadMatrixMarket(dir / "a.mtx");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->rows, 3);
  ASSERT_EQ(m->entries.size(), 4u);
  EXPECT_EQ(m->entries[3].row, 0);
  EXPECT_EQ(m->entries[3].col, 2);
  EXPECT_EQ(m->entries[3].value, -1.5);
}

TEST(MatrixMarketTest, SymmetricFilesAreExpanded) {
  TempDir dir;
  WriteFile(dir / "s.mtx",
            "%%MatrixMarket matrix coordinate real symmetric\n2 2 3\n1 1 2\n2 1 -1\n2 2 2\n");
  auto m = ReadMatrixMarket(dir / "s.mtx");
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->entries.size(), 4u);  // (2,1) also stored as (1,2)
  bool upper = false;
  for (const auto& e : m->entries) upper |= (e.row == 0 && e.col == 1 && e.value == -1);
  EXPECT_TRUE(upper);
}

TEST(MatrixMarketTest, CompressedRowsSortColumnsSumDuplicatesAndKeepEmptyRows) {
  TempDir dir;
  WriteFile(dir / "a.mtx",
            "%%MatrixMarket matrix coordinate real general\n4 4 7\n3 3 1\n1 4 2\n1 1 3\n3 1 4\n1 4 "
            "0.5\n4 4 6\n1 2 7\n");
  auto a = ReadMatrixMarketRows(dir / "a.mtx");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->nonZeros(), 6);  // (1,4) twice: one entry of 2.5
  EXPECT_EQ(a->coeff(0, 3), 2.5);
  EXPECT_EQ(a->outerIndexPtr()[2], a->outerIndexPtr()[1]);  // row 2 is empty
  EXPECT_EQ(std::vector<int>(a->innerIndexPtr(), a->innerIndexPtr() + 3),
            (std::vector<int>{0, 1, 3}));
  ExpectSameRows(*a, FromTriplets(*ReadMatrixMarket(dir / "a.mtx")));
}

// Random files, general and symmetric, entries in any order, with duplicates: the same matrix
// as Eigen assembles from the same entries.
TEST(MatrixMarketTest, CompressedRowsEqualEigensAssemblyOnRandomFiles) {
  TempDir dir;
  std::mt19937 rng(20261123);
  for (int round = 0; round < 200; ++round) {
    const int n = 1 + static_cast<int>(rng() % 30);
    const bool symmetric = round % 2 == 1;
    const int count = static_cast<int>(rng() % (3 * n + 1));
    std::ostringstream body;
    int lines = 0;
    for (int k = 0; k < count; ++k) {
      int i = 1 + static_cast<int>(rng() % n), j = 1 + static_cast<int>(rng() % n);
      if (symmetric && j > i) std::swap(i, j);
      body << i << " " << j << " " << static_cast<int>(rng() % 17) - 8 << ".25\n";
      ++lines;
    }
    for (int i = 1; i <= n; ++i, ++lines)
      body << i << " " << i << " 100\n";  // every diagonal: CG's rule
    WriteFile(dir / "r.mtx", std::string("%%MatrixMarket matrix coordinate real ") +
                                 (symmetric ? "symmetric" : "general") + "\n" + std::to_string(n) +
                                 " " + std::to_string(n) + " " + std::to_string(lines) + "\n" +
                                 body.str());
    auto a = ReadMatrixMarketRows(dir / "r.mtx");
    ASSERT_TRUE(a.ok()) << a.status().message();
    ExpectSameRows(*a, FromTriplets(*ReadMatrixMarket(dir / "r.mtx")));
  }
}

// A dense row (an arrow matrix's first row and column), its entries in reverse order with a
// duplicate: sorted without the quadratic cost a per-row insertion would have, and still the
// matrix Eigen assembles.
TEST(MatrixMarketTest, ALongRowIsSortedToo) {
  TempDir dir;
  const int n = 20000;
  std::ostringstream body;
  int lines = 0;
  for (int j = n; j >= 2; --j, ++lines) body << j << " 1 -0.5\n";  // column 1, below the diagonal
  body << n << " 1 0.25\n";
  ++lines;
  for (int i = 1; i <= n; ++i, ++lines) body << i << " " << i << " " << n << "\n";
  WriteFile(dir / "arrow.mtx", "%%MatrixMarket matrix coordinate real symmetric\n" +
                                   std::to_string(n) + " " + std::to_string(n) + " " +
                                   std::to_string(lines) + "\n" + body.str());
  auto a = ReadMatrixMarketRows(dir / "arrow.mtx");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->outerIndexPtr()[1], n);  // row 1: every column once
  EXPECT_EQ(a->coeff(0, n - 1), -0.25);
  ExpectSameRows(*a, FromTriplets(*ReadMatrixMarket(dir / "arrow.mtx")));
}

// A diagonal matrix over several chunks: one entry a row, so the chunks share one array of row
// counts (more would outweigh the entries), and the rows come out the same.
TEST(MatrixMarketTest, FewEntriesPerRowOverSeveralChunks) {
  TempDir dir;
  const int n = 1500000;  // ~20 MB: more than one 8 MiB chunk on a machine of two cores or more
  std::string text = "%%MatrixMarket matrix coordinate real general\n";
  text += std::to_string(n) + " " + std::to_string(n) + " " + std::to_string(n) + "\n";
  text.reserve(text.size() + size_t{20} * n);
  for (int i = n; i >= 1; --i) {  // last row first
    const std::string row = std::to_string(i);
    text += row;
    text += ' ';
    text += row;
    text += i % 2 ? " 1.5\n" : " -2\n";
  }
  WriteFile(dir / "diag.mtx", text);
  auto a = ReadMatrixMarketRows(dir / "diag.mtx");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->coeff(0, 0), 1.5);
  EXPECT_EQ(a->coeff(n - 1, n - 1), -2);
  ExpectSameRows(*a, FromTriplets(*ReadMatrixMarket(dir / "diag.mtx")));
}

TEST(MatrixMarketTest, VectorRoundTripIsExact) {
  TempDir dir;
  std::vector<double> x = {1.0, -2.5e-300, 3.141592653589793, 1e300, 0.1};
  ASSERT_OK(WriteMatrixMarketVector(dir / "x.mtx", x));
  auto back = ReadMatrixMarketVector(dir / "x.mtx");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, x);
}

TEST(MatrixMarketTest, CoordinateVector) {
  TempDir dir;
  WriteFile(dir / "b.mtx", "%%MatrixMarket matrix coordinate real general\n4 1 2\n2 1 7\n4 1 -1\n");
  auto b = ReadMatrixMarketVector(dir / "b.mtx");
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(*b, (std::vector<double>{0, 7, 0, -1}));
}

TEST(MatrixMarketTest, MalformedFilesNameFileLineAndProblem) {
  TempDir dir;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "empty file"},
      {"hello\n", ":1: missing %%MatrixMarket banner"},
      {"%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1\n",
       "field 'complex' is not supported"},
      {"%%MatrixMarket matrix coordinate real hermitian\n1 1 1\n1 1 1\n", "symmetry 'hermitian'"},
      {"%%MatrixMarket matrix coordinate real general\n2 2\n", ":2: size line"},
      {"%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1.0000000\n",
       "2 entries announced, 1 found"},
      {"%%MatrixMarket matrix coordinate real general\n2 2 2\n3 1 1\n2 2 1\n",
       ":3: entry (3, 1) is outside the 2 x 2 matrix"},
      {"%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 x\n2 2 1\n",
       ":3: entry must be 'ROW COL VALUE'"},
      // Indices read digit by digit: signs, 19 digits that fit, more than fit, and no digits.
      {"%%MatrixMarket matrix coordinate real general\n2 2 2\n-1 1 1\n2 2 1\n",
       ":3: entry (-1, 1) is outside"},
      {"%%MatrixMarket matrix coordinate real general\n2 2 2\n+1 1 1\n2 +9223372036854775807 1\n",
       ":4: entry (2, 9223372036854775807) is outside"},
      {"%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 99999999999999999999999 1\n",
       ":4: entry must be 'ROW COL VALUE'"},
      {"%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 - 1\n",
       ":4: entry must be 'ROW COL VALUE'"},
      {"%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 2x 1\n",
       ":4: entry must be 'ROW COL VALUE'"},
      {"%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n1 2 1\n2 2 1\n",
       "above the diagonal"},
      {"%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 2 2\n1 2 1\n",
       "more entries than announced"},
      // Headers that announce more than the file or the machine can hold (nothing allocated).
      {"%%MatrixMarket matrix coordinate real general\n1000 1000 1000000000000\n1 1 1\n",
       "1000000000000 entries announced, but the 6 bytes left in the file hold at most 1"},
      {"%%MatrixMarket matrix coordinate real general\n1000000000 1000000000 1\n1 1 1\n",
       "larger than the 100000000 rows"},
      {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1\n",
       "only 1 entries for 3 rows"},
      {"%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n",
       "must be in coordinate format"},
  };
  for (const auto& [content, message] : cases) {
    WriteFile(dir / "bad.mtx", content);
    auto m = ReadMatrixMarket(dir / "bad.mtx");
    ASSERT_FALSE(m.ok()) << content;
    EXPECT_NE(m.status().message().find(message), std::string::npos) << m.status().message();
    EXPECT_EQ(ReadMatrixMarketRows(dir / "bad.mtx").status().message(), m.status().message());
    EXPECT_EQ(m.status().message().rfind(dir / "bad.mtx", 0), 0u) << m.status().message();
  }
  EXPECT_EQ(ReadMatrixMarket(dir / "absent.mtx").status().code(), StatusCode::kNotFound);
  WriteFile(dir / "v.mtx", "%%MatrixMarket matrix array real general\n3 1\n1\n2\n");
  EXPECT_FALSE(ReadMatrixMarketVector(dir / "v.mtx").ok());
  WriteFile(dir / "v.mtx", "%%MatrixMarket matrix array real general\n3 2\n1\n2\n3\n4\n5\n6\n");
  EXPECT_NE(ReadMatrixMarketVector(dir / "v.mtx").status().message().find("ROWS x 1"),
            std::string::npos);
  // A vector longer than the matrix, or than its file can hold, is refused before allocation.
  WriteFile(dir / "v.mtx",
            "%%MatrixMarket matrix coordinate real general\n1000000000 1 1\n1 1 1\n");
  EXPECT_NE(ReadMatrixMarketVector(dir / "v.mtx", 4)
                .status()
                .message()
                .find("vector of 1000000000 rows for a matrix of 4"),
            std::string::npos);
  WriteFile(dir / "v.mtx", "%%MatrixMarket matrix array real general\n1000000000 1\n1\n");
  EXPECT_NE(
      ReadMatrixMarketVector(dir / "v.mtx").status().message().find("1000000000 values announced"),
      std::string::npos);
}

// A file large enough to be parsed in several chunks (8 MiB each, one per core): the same
// entries as a line-by-line reading, comments, '+' signs and CRLF line ends anywhere, and a
// problem in a later chunk still named by its line.
TEST(MatrixMarketTest, LargeFilesAreParsedInChunksWithTheRightLineNumbers) {
  TempDir dir;
  const int n = 400000;  // 3 entries per row, ~27 bytes each: ~30 MB
  std::string body;
  body.reserve(size_t{40} << 20);
  long long nnz = 0;
  for (int i = 1; i <= n; ++i) {
    for (int j = std::max(1, i - 2); j <= i; ++j) {
      body += std::to_string(i) + " " + std::to_string(j) + (j == i ? " +4.5e+00" : " -0.25") +
              (i % 1000 == 0 ? "\r\n" : "\n");
      ++nnz;
    }
    if (i % 50000 == 0) body += "% a comment between entries\n\n";
  }
  const std::string header = "%%MatrixMarket matrix coordinate real symmetric\n" +
                             std::to_string(n) + " " + std::to_string(n) + " " +
                             std::to_string(nnz) + "\n";
  WriteFile(dir / "big.mtx", header + body);
  auto m = ReadMatrixMarket(dir / "big.mtx");
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->entries.size(), static_cast<size_t>(n + 2 * (nnz - n)));
  double sum = 0;
  std::vector<int> per_row(n, 0);
  for (const auto& e : m->entries) {
    sum += e.value;
    ++per_row[static_cast<size_t>(e.row)];
  }
  EXPECT_DOUBLE_EQ(sum, 4.5 * n - 0.25 * 2 * static_cast<double>(nnz - n));
  EXPECT_EQ(per_row[0], 3);
  EXPECT_EQ(per_row[n / 2], 5);
  // In compressed rows, each chunk's entries written at their place in every row.
  auto rows = ReadMatrixMarketRows(dir / "big.mtx");
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ExpectSameRows(*rows, FromTriplets(*m));
  // Line numbers: the banner is line 1, the sizes line 2; before row r >= 3 come 1 + 2 + 3 (r - 3)
  // entries and the comment pairs of the rows before it.
  auto line_of = [&](int row) { return 2 + (3 * row - 6) + 2 * ((row - 1) / 50000) + 1; };
  std::string bad = body;
  std::string target = "\n";  // (appended: g++ 12 warns falsely about "\n" + ..., -Wrestrict)
  target += std::to_string(n - 10) + " " + std::to_string(n - 12) + " -0.25";
  const size_t at = bad.find(target);
  ASSERT_NE(at, std::string::npos);
  bad.replace(at + 1 + std::to_string(n - 10).size(), 1, "x");  // "ROWxCOL": not an entry
  WriteFile(dir / "bad.mtx", header + bad);
  auto b = ReadMatrixMarket(dir / "bad.mtx");
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().message(), dir / "bad.mtx" + ":" + std::to_string(line_of(n - 10)) +
                                      ": entry must be 'ROW COL VALUE'");
  // One entry too many, in the last chunk.
  WriteFile(dir / "more.mtx", header + body + "1 1 1\n");
  auto more = ReadMatrixMarket(dir / "more.mtx");
  ASSERT_FALSE(more.ok());
  EXPECT_EQ(more.status().message(), dir / "more.mtx" + ":" +
                                         std::to_string(2 + nnz + 2 * (n / 50000) + 1) +
                                         ": more entries than announced");
}

}  // namespace
}  // namespace aiac::cg
