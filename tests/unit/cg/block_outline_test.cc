// A daemon's block built from an outline and the matrix's cache is the block the spawner would
// have built and sent (METIS parts with overlap, and slices), and a cache of another version or
// another matrix, or a damaged outline, is refused rather than used.
#include "apps/cg/block_outline.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "apps/cg/cg_app.h"
#include "apps/cg/partition.h"
#include "support/test_support.h"

namespace aiac::cg {
namespace {

using aiac::testing::TempDir;
using aiac::testing::WriteFile;

bool Same(const SpMat& a, const SpMat& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() && a.nonZeros() == b.nonZeros() &&
         SpMat(a - b).norm() == 0;
}

void ExpectSameBlock(const Block& want, const Block& got) {
  EXPECT_EQ(want.n, got.n);
  EXPECT_EQ(want.rows, got.rows);
  EXPECT_EQ(want.own, got.own);
  EXPECT_EQ(want.nonzeros, got.nonzeros);
  EXPECT_TRUE(Same(want.local, got.local));
  EXPECT_EQ(want.b, got.b);
  ASSERT_EQ(want.in.size(), got.in.size());
  for (size_t k = 0; k < want.in.size(); ++k) {
    EXPECT_EQ(want.in[k].task, got.in[k].task);
    EXPECT_EQ(want.in[k].cols, got.in[k].cols);
    EXPECT_TRUE(Same(want.in[k].a, got.in[k].a));
  }
  ASSERT_EQ(want.out.size(), got.out.size());
  for (size_t k = 0; k < want.out.size(); ++k) {
    EXPECT_EQ(want.out[k].task, got.out[k].task);
    EXPECT_EQ(want.out[k].rows, got.out[k].rows);
  }
}

// A grid Laplacian written to `path` and cached, as the spawner's read leaves it.
MatrixFileVersion WriteAndCache(const std::string& path, const SpMat& a) {
  std::string text = "%%MatrixMarket matrix coordinate real general\n" + std::to_string(a.rows()) +
                     " " + std::to_string(a.cols()) + " " + std::to_string(a.nonZeros()) + "\n";
  for (int i = 0; i < a.rows(); ++i) {
    for (SpMat::InnerIterator it(a, i); it; ++it) {
      text += std::to_string(i + 1) + " " + std::to_string(it.col() + 1) + " " +
              std::to_string(it.value()) + "\n";
    }
  }
  WriteFile(path, text);
  std::vector<std::string> notes;
  auto read = ReadMatrix(path, true, notes);
  EXPECT_TRUE(read.ok() && read->cached.has_value());
  return read.ok() && read->cached ? *read->cached : MatrixFileVersion{};
}

// Every block of partition `part` with `layers` of overlap, both ways.
void CheckEveryBlock(const std::string& path, const SpMat& a, const RowPartition& part,
                     int layers) {
  const int n = static_cast<int>(a.rows());
  const MatrixFileVersion version = WriteAndCache(path, a);
  const Eigen::VectorXd b = a * Eigen::VectorXd::LinSpaced(n, 1, 2);
  std::vector<std::vector<int>> block_rows;
  for (const auto& own : part.rows) block_rows.push_back(Extend(a, own, layers));
  const auto sends = SendLists(a, part.owner, block_rows);
  for (size_t l = 0; l < part.rows.size(); ++l) {
    std::vector<int> own;
    std::vector<double> b_rows;
    for (size_t k = 0; k < block_rows[l].size(); ++k) {
      b_rows.push_back(b[block_rows[l][k]]);
      if (part.owner[static_cast<size_t>(block_rows[l][k])] == l)
        own.push_back(static_cast<int>(k));
    }
    const RowFn row = MatrixRows(a);
    const OwnerFn owner = [&](int r) { return part.owner[static_cast<size_t>(r)]; };
    const Block want = BuildBlock(row, b_rows, n, block_rows[l], own, owner, sends[l]);
    const BlockOutline outline =
        OutlineBlock(a, b_rows, block_rows[l], own, part.owner, sends[l], path, version);
    EXPECT_EQ(outline.nonzeros, want.nonzeros);
    const std::string bytes = EncodeBlockOutline(outline);
    ASSERT_TRUE(IsBlockOutline(bytes));
    EXPECT_LT(bytes.size(), EncodeBlock(want).size());
    auto decoded = DecodeBlockOutline(bytes);
    ASSERT_TRUE(decoded.ok()) << decoded.status().message();
    auto got = BuildBlockFromCache(std::move(*decoded));
    ASSERT_TRUE(got.ok()) << got.status().message();
    SCOPED_TRACE("block " + std::to_string(l));
    ExpectSameBlock(want, *got);
  }
}

TEST(BlockOutlineTest, MetisBlocksWithOverlapBuiltFromTheCacheAreTheBlocksTheSpawnerWouldSend) {
  TempDir dir;
  const SpMat a = GridLaplacian(30, 20);
  auto part = MetisPartition(a, 5);
  ASSERT_TRUE(part.ok()) << part.status().message();
  CheckEveryBlock(dir.path() + "/grid.mtx", a, *part, 2);
}

TEST(BlockOutlineTest, SlicesWithoutOverlapToo) {
  TempDir dir;
  const SpMat a = GridLaplacian(17, 13);
  CheckEveryBlock(dir.path() + "/grid.mtx", a, ContiguousPartition(17 * 13, 4), 0);
}

TEST(BlockOutlineTest, ACacheOfAnotherVersionOrAnotherMatrixIsRefused) {
  TempDir dir;
  const std::string path = dir.path() + "/grid.mtx";
  const SpMat a = GridLaplacian(12, 10);
  const MatrixFileVersion version = WriteAndCache(path, a);
  const auto part = ContiguousPartition(120, 3);
  const auto sends = SendLists(a, part.owner, part.rows);
  std::vector<int> own(part.rows[1].size());
  for (size_t k = 0; k < own.size(); ++k) own[k] = static_cast<int>(k);
  BlockOutline outline = OutlineBlock(a, std::vector<double>(own.size(), 1.0), part.rows[1], own,
                                      part.owner, sends[1], path, version);

  MatrixFileVersion other = version;
  other.mtime_ns += 1;
  BlockOutline stale = outline;
  stale.source = other;
  auto refused = BuildBlockFromCache(stale);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(refused.status().message().find("another version"), std::string::npos)
      << refused.status().message();

  // The same shape, another pattern: the cache's rows do not give the outline's couplings.
  const std::string path2 = dir.path() + "/other.mtx";
  const SpMat a2 = GridLaplacian(120, 1);
  BlockOutline moved = outline;
  moved.matrix = path2;
  moved.source = WriteAndCache(path2, a2);
  auto wrong = BuildBlockFromCache(moved);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), StatusCode::kCorruption) << wrong.status().message();

  BlockOutline missing = outline;
  missing.matrix = dir.path() + "/none.mtx";
  EXPECT_EQ(BuildBlockFromCache(missing).status().code(), StatusCode::kNotFound);
}

TEST(BlockOutlineTest, EveryTruncationOrFlippedByteOfAnOutlineIsRefusedOrHarmless) {
  TempDir dir;
  const std::string path = dir.path() + "/grid.mtx";
  const SpMat a = GridLaplacian(8, 6);
  const MatrixFileVersion version = WriteAndCache(path, a);
  const auto part = ContiguousPartition(48, 2);
  const auto sends = SendLists(a, part.owner, part.rows);
  std::vector<int> own(part.rows[0].size());
  for (size_t k = 0; k < own.size(); ++k) own[k] = static_cast<int>(k);
  const std::string bytes =
      EncodeBlockOutline(OutlineBlock(a, std::vector<double>(own.size(), 1.0), part.rows[0], own,
                                      part.owner, sends[0], path, version));
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    EXPECT_FALSE(DecodeBlockOutline(bytes.substr(0, cut)).ok()) << "cut at " << cut;
  }
  for (size_t at = 0; at < bytes.size(); ++at) {
    std::string bad = bytes;
    bad[at] = static_cast<char>(bad[at] ^ 0x5a);
    // Decodes to an error, or to an outline that builds a block or is refused: never a crash.
    if (auto o = DecodeBlockOutline(bad); o.ok()) (void)BuildBlockFromCache(std::move(*o));
  }
}

}  // namespace
}  // namespace aiac::cg
