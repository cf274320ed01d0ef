#include "apps/cg/matrix_market.h"

#include <gtest/gtest.h>

#include "support/test_support.h"

namespace aiac::cg {
namespace {

using aiac::testing::TempDir;
using aiac::testing::WriteFile;

TEST(MatrixMarketTest, GeneralCoordinateMatrix) {
  TempDir dir;
  WriteFile(dir / "a.mtx",
            "%%MatrixMarket matrix coordinate real general\n% a comment\n\n3 3 4\n1 1 4.0\n2 2 5\n3 3 6e0\n1 3 -1.5\n");
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
  WriteFile(dir / "s.mtx", "%%MatrixMarket matrix coordinate real symmetric\n2 2 3\n1 1 2\n2 1 -1\n2 2 2\n");
  auto m = ReadMatrixMarket(dir / "s.mtx");
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->entries.size(), 4u);  // (2,1) also stored as (1,2)
  bool upper = false;
  for (const auto& e : m->entries) upper |= (e.row == 0 && e.col == 1 && e.value == -1);
  EXPECT_TRUE(upper);
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
      {"%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1\n", "field 'complex' is not supported"},
      {"%%MatrixMarket matrix coordinate real hermitian\n1 1 1\n1 1 1\n", "symmetry 'hermitian'"},
      {"%%MatrixMarket matrix coordinate real general\n2 2\n", ":2: size line"},
      {"%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1.0000000\n", "2 entries announced, 1 found"},
      {"%%MatrixMarket matrix coordinate real general\n2 2 2\n3 1 1\n2 2 1\n", ":3: entry (3, 1) is outside the 2 x 2 matrix"},
      {"%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 x\n2 2 1\n", ":3: entry must be 'ROW COL VALUE'"},
      {"%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n1 2 1\n2 2 1\n", "above the diagonal"},
      {"%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 2 2\n1 2 1\n", "more entries than announced"},
      // Headers that announce more than the file or the machine can hold (nothing allocated).
      {"%%MatrixMarket matrix coordinate real general\n1000 1000 1000000000000\n1 1 1\n",
       "1000000000000 entries announced, but the 6 bytes left in the file hold at most 1"},
      {"%%MatrixMarket matrix coordinate real general\n1000000000 1000000000 1\n1 1 1\n",
       "larger than the 100000000 rows"},
      {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1\n", "only 1 entries for 3 rows"},
      {"%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", "must be in coordinate format"},
  };
  for (const auto& [content, message] : cases) {
    WriteFile(dir / "bad.mtx", content);
    auto m = ReadMatrixMarket(dir / "bad.mtx");
    ASSERT_FALSE(m.ok()) << content;
    EXPECT_NE(m.status().message().find(message), std::string::npos) << m.status().message();
    EXPECT_EQ(m.status().message().rfind(dir / "bad.mtx", 0), 0u) << m.status().message();
  }
  EXPECT_EQ(ReadMatrixMarket(dir / "absent.mtx").status().code(), StatusCode::kNotFound);
  WriteFile(dir / "v.mtx", "%%MatrixMarket matrix array real general\n3 1\n1\n2\n");
  EXPECT_FALSE(ReadMatrixMarketVector(dir / "v.mtx").ok());
  WriteFile(dir / "v.mtx", "%%MatrixMarket matrix array real general\n3 2\n1\n2\n3\n4\n5\n6\n");
  EXPECT_NE(ReadMatrixMarketVector(dir / "v.mtx").status().message().find("ROWS x 1"), std::string::npos);
  // A vector longer than the matrix, or than its file can hold, is refused before allocation.
  WriteFile(dir / "v.mtx", "%%MatrixMarket matrix coordinate real general\n1000000000 1 1\n1 1 1\n");
  EXPECT_NE(ReadMatrixMarketVector(dir / "v.mtx", 4).status().message().find("vector of 1000000000 rows for a matrix of 4"),
            std::string::npos);
  WriteFile(dir / "v.mtx", "%%MatrixMarket matrix array real general\n1000000000 1\n1\n");
  EXPECT_NE(ReadMatrixMarketVector(dir / "v.mtx").status().message().find("1000000000 values announced"),
            std::string::npos);
}

}  // namespace
}  // namespace aiac::cg
