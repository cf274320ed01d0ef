// The binary cache of a parsed matrix: written on the first read, used on the next, ignored (and
// rewritten) when the file changed, even with its size and modification time kept, and never
// trusted when damaged, truncated or not a cache at all.
#include "apps/cg/matrix_cache.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "apps/cg/block_outline.h"
#include "apps/cg/cg_app.h"
#include "apps/cg/row_moves.h"
#include "job_params.h"
#include "support/test_support.h"

namespace aiac::cg {
namespace {

using aiac::testing::ReadFile;
using aiac::testing::TempDir;
using aiac::testing::WriteFile;

// A tridiagonal n x n matrix in Matrix Market text, diagonal `d`.
std::string Tridiagonal(int n, const std::string& d) {
  std::string text = "%%MatrixMarket matrix coordinate real symmetric\n" + std::to_string(n) + " " +
                     std::to_string(n) + " " + std::to_string(2 * n - 1) + "\n";
  for (int i = 1; i <= n; ++i) {
    text += std::to_string(i) + " " + std::to_string(i) + " " + d + "\n";
    if (i < n) text += std::to_string(i + 1) + " " + std::to_string(i) + " -1\n";
  }
  return text;
}

bool Same(const SpMat& a, const SpMat& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols() || a.nonZeros() != b.nonZeros()) return false;
  return SpMat(a - b).norm() == 0;
}

struct Read {
  SpMat a;
  std::vector<std::string> notes;
};

Read ReadIt(const std::string& path, bool cache = true) {
  Read r;
  auto a = ReadMatrix(path, cache, r.notes);
  EXPECT_TRUE(a.ok()) << a.status().message();
  if (a.ok()) r.a = a->matrix();
  return r;
}

bool Says(const Read& r, const std::string& what) {
  for (const auto& n : r.notes) {
    if (n.find(what) != std::string::npos) return true;
  }
  return false;
}

// The cache of `path` for the file as it is now.
Result<SpMat> Load(const std::string& path) {
  auto version = MatrixFileVersionOf(path);
  if (!version.ok()) return version.status();
  auto cache = LoadMatrixCache(path, *version);
  if (!cache.ok()) return cache.status();
  return SpMat(cache->matrix());
}

// Flips one byte of `path` at `offset` from its end.
void FlipFromEnd(const std::string& path, std::streamoff offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(-offset, std::ios::end);
  char c = 0;
  f.read(&c, 1);
  f.seekp(-offset, std::ios::end);
  c = static_cast<char>(c ^ 0x5a);
  f.write(&c, 1);
}

TEST(MatrixCacheTest, WrittenOnTheFirstReadUsedOnTheNext) {
  TempDir dir;
  const std::string path = dir / "t.mtx";
  WriteFile(path, Tridiagonal(50, "4"));
  Read first = ReadIt(path);
  EXPECT_TRUE(Says(first, "wrote the cache")) << ::testing::PrintToString(first.notes);
  EXPECT_TRUE(std::filesystem::exists(MatrixCachePath(path)));
  Read second = ReadIt(path);
  EXPECT_TRUE(Says(second, "from its cache")) << ::testing::PrintToString(second.notes);
  EXPECT_TRUE(Same(first.a, second.a));
  EXPECT_EQ(second.a.coeff(3, 2), -1);
  EXPECT_EQ(second.a.coeff(3, 4), -1);
  EXPECT_TRUE(second.a.isCompressed());
}

TEST(MatrixCacheTest, AChangedFileIsReadAgainAndItsCacheRewritten) {
  TempDir dir;
  const std::string path = dir / "t.mtx";
  WriteFile(path, Tridiagonal(50, "4"));
  ReadIt(path);
  WriteFile(path, Tridiagonal(60, "5"));
  Read changed = ReadIt(path);
  EXPECT_TRUE(Says(changed, "another version")) << ::testing::PrintToString(changed.notes);
  EXPECT_EQ(changed.a.rows(), 60);
  EXPECT_EQ(changed.a.coeff(0, 0), 5);
  Read again = ReadIt(path);
  EXPECT_TRUE(Says(again, "from its cache"));
  EXPECT_EQ(again.a.rows(), 60);
}

TEST(MatrixCacheTest, AnEditKeepingSizeAndTimeIsStillNoticed) {
  TempDir dir;
  const std::string path = dir / "t.mtx";
  WriteFile(path, Tridiagonal(50, "4"));
  struct stat before {};
  ASSERT_EQ(::stat(path.c_str(), &before), 0);
  ReadIt(path);
  WriteFile(path, Tridiagonal(50, "6"));  // same length, another diagonal
  const timespec times[2] = {before.st_atim, before.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
  Read edited = ReadIt(path);
  EXPECT_TRUE(Says(edited, "another version")) << ::testing::PrintToString(edited.notes);
  EXPECT_EQ(edited.a.coeff(7, 7), 6);
}

TEST(MatrixCacheTest, ADamagedCacheIsNeverTrusted) {
  TempDir dir;
  const std::string path = dir / "t.mtx";
  const std::string cache = MatrixCachePath(path);
  WriteFile(path, Tridiagonal(50, "4"));
  const SpMat right = ReadIt(path).a;
  const std::string good = ReadFile(cache);

  FlipFromEnd(cache, 3);  // in the last value
  auto flipped = Load(path);
  ASSERT_FALSE(flipped.ok());
  EXPECT_EQ(flipped.status().code(), StatusCode::kCorruption);
  EXPECT_NE(flipped.status().message().find("checksum"), std::string::npos)
      << flipped.status().message();
  Read r = ReadIt(path);
  EXPECT_TRUE(Says(r, "damaged"));
  EXPECT_TRUE(Same(r.a, right));
  EXPECT_TRUE(Load(path).ok()) << "rewritten after the text was read";

  WriteFile(cache, good.substr(0, good.size() - 8));
  auto cut = Load(path);
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.status().message().find("do not match its length"), std::string::npos)
      << cut.status().message();

  WriteFile(cache,
            "%%MatrixMarket and other text that is no cache at all, long enough for a header.....");
  auto other = Load(path);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("not an aiac matrix cache"), std::string::npos);

  WriteFile(cache, "short");
  EXPECT_EQ(Load(path).status().code(), StatusCode::kCorruption);
  EXPECT_TRUE(Same(ReadIt(path).a, right));
}

// The values are 8-aligned in the file whatever the parity of rows + 1 + entries (4 bytes of
// padding when it is odd), so the spawner uses the mapped arrays as they are; a cache of the
// first format (values right after the columns) is not used, and rewritten.
TEST(MatrixCacheTest, BothLayoutsMapAlignedAndAnOlderFormatIsRewritten) {
  TempDir dir;
  const std::string path = dir / "t.mtx";
  const std::string cache = MatrixCachePath(path);
  const std::string even =
      "%%MatrixMarket matrix coordinate real general\n3 3 4\n1 1 2\n2 2 3\n3 3 4\n1 3 -1\n";
  for (const std::string& text : {even, Tridiagonal(50, "4")}) {
    WriteFile(path, text);
    const SpMat parsed = ReadIt(path).a;
    Read again = ReadIt(path);
    EXPECT_TRUE(Says(again, "from its cache"));
    EXPECT_TRUE(Same(again.a, parsed));
    const auto ints = 72 + 4 * (parsed.rows() + 1 + parsed.nonZeros());
    EXPECT_EQ(static_cast<int64_t>(ReadFile(cache).size()),
              ints + ints % 8 + 8 * parsed.nonZeros());
    auto version = MatrixFileVersionOf(path);
    ASSERT_TRUE(version.ok());
    auto mapped = LoadMatrixCache(path, *version);
    ASSERT_TRUE(mapped.ok()) << mapped.status().message();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(mapped->matrix().valuePtr()) % alignof(double), 0u);
  }
  std::string bytes = ReadFile(cache);
  bytes[7] = '1';  // "AIACCSR1"
  WriteFile(cache, bytes);
  Read old = ReadIt(path);
  EXPECT_TRUE(Says(old, "is of an older format")) << ::testing::PrintToString(old.notes);
  EXPECT_TRUE(Says(old, "wrote the cache")) << ::testing::PrintToString(old.notes);
  EXPECT_TRUE(Load(path).ok());
}

// Checksums only say the file is as written: a cache whose arrays are intact but whose structure
// is wrong (here columns out of order, or out of range) is refused before Eigen reads through it.
TEST(MatrixCacheTest, ACacheWithABadStructureIsRefusedEvenWithRightChecksums) {
  TempDir dir;
  const std::string path = dir / "t.mtx";
  WriteFile(path, Tridiagonal(5, "4"));
  auto version = MatrixFileVersionOf(path);
  ASSERT_TRUE(version.ok());
  for (int bad : {0, 7}) {
    SpMat a = ReadIt(path, /*cache=*/false).a;
    if (bad == 0) {
      std::swap(a.innerIndexPtr()[3], a.innerIndexPtr()[4]);  // row 2: columns 2, 1, 3
    } else {
      a.innerIndexPtr()[a.nonZeros() - 1] = bad;  // column 8 of a 5 x 5 matrix
    }
    ASSERT_OK(SaveMatrixCache(path, a, *version));
    auto loaded = LoadMatrixCache(path, *version);
    ASSERT_FALSE(loaded.ok());
    EXPECT_EQ(loaded.status().code(), StatusCode::kCorruption);
    EXPECT_NE(loaded.status().message().find(bad == 0 ? "bad column index in row 2"
                                                      : "bad column index in row 5"),
              std::string::npos)
        << loaded.status().message();
  }
}

// A cache whose checksums and structure hold but whose matrix is not the file's (a value no
// file could hold, not a number, on the diagonal): Prepare removes it with a warning, reads the
// file and writes a good cache, so the next run reads the cache again instead of failing on it for
// ever.
TEST(MatrixCacheTest, ACacheWhoseMatrixFailsTheChecksIsRemovedAndRebuilt) {
  TempDir dir;
  const std::string path = dir / "t.mtx";
  WriteFile(path, Tridiagonal(50, "4"));
  auto version = MatrixFileVersionOf(path);
  ASSERT_TRUE(version.ok());
  SpMat forged = ReadIt(path, /*cache=*/false).a;
  forged.coeffRef(7, 7) = std::nan("");
  ASSERT_OK(SaveMatrixCache(path, forged, *version));
  ASSERT_TRUE(Load(path).ok());  // checksums and structure hold
  for (const bool first : {true, false}) {
    CgApp app;
    auto plan = app.Prepare(Params({{"matrix", path}}, 2));
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    const Read notes{SpMat(), plan->notes};
    EXPECT_EQ(Says(notes, "warning: removed the cache"), first)
        << ::testing::PrintToString(notes.notes);
    EXPECT_EQ(Says(notes, "not finite at row 8"), first);
    EXPECT_EQ(Says(notes, "wrote the cache"), first);
    if (!first) {
      EXPECT_TRUE(Says(notes, "from its cache")) << ::testing::PrintToString(notes.notes);
    }
  }
  auto rebuilt = Load(path);
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status().message();
  EXPECT_TRUE(Same(*rebuilt, ReadIt(path, /*cache=*/false).a));
}

// A damaged cache is removed when it is found, not only replaced once a new one is written.
TEST(MatrixCacheTest, ADamagedCacheIsRemovedWhenFound) {
  TempDir dir;
  const std::string path = dir / "t.mtx";
  WriteFile(path, Tridiagonal(50, "4"));
  ReadIt(path);
  FlipFromEnd(MatrixCachePath(path), 3);
  std::vector<std::string> notes;
  auto read = ParseMatrix(path, true, notes);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_FALSE(std::filesystem::exists(MatrixCachePath(path)));
  EXPECT_TRUE(Says(Read{SpMat(), notes}, "warning: removed a damaged cache"))
      << ::testing::PrintToString(notes);
}

TEST(MatrixCacheTest, AFolderWhereTheCacheWouldGoIsReportedNotFatal) {
  TempDir dir;
  const std::string path = dir / "t.mtx";
  WriteFile(path, Tridiagonal(20, "4"));
  std::filesystem::create_directory(MatrixCachePath(path));
  Read r = ReadIt(path);
  EXPECT_TRUE(Says(r, "no cache for the next run")) << ::testing::PrintToString(r.notes);
  EXPECT_EQ(r.a.rows(), 20);
}

TEST(MatrixCacheTest, OffMeansNeitherReadNorWritten) {
  TempDir dir;
  const std::string path = dir / "t.mtx";
  WriteFile(path, Tridiagonal(20, "4"));
  Read r = ReadIt(path, /*cache=*/false);
  EXPECT_TRUE(r.notes.empty());
  EXPECT_FALSE(std::filesystem::exists(MatrixCachePath(path)));
  EXPECT_EQ(Load(path).status().code(), StatusCode::kNotFound);
}

// Prepare writes a parsed matrix's cache while it partitions the matrix, and daemons that see the
// file are given outlines naming that cache. When it cannot be written, they are sent their
// blocks after all, and the plan says why.
TEST(MatrixCacheTest, DaemonsAreSentTheirBlocksWhenPrepareCannotWriteTheCache) {
  TempDir dir;
  const std::string path = dir / "t.mtx";
  WriteFile(path, Tridiagonal(300, "4"));
  for (const bool blocked : {false, true}) {
    SCOPED_TRACE(blocked ? "a folder where the cache would go" : "a cache written");
    std::filesystem::remove_all(MatrixCachePath(path));
    if (blocked) std::filesystem::create_directory(MatrixCachePath(path));
    CgApp app;
    auto params = Params({{"matrix", path}}, 3);
    params.shared_files = true;
    auto plan = app.Prepare(params);
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    const Read notes{SpMat(), plan->notes};
    EXPECT_EQ(Says(notes, "wrote the cache"), !blocked) << ::testing::PrintToString(notes.notes);
    EXPECT_EQ(Says(notes, "no cache for the next run"), blocked)
        << ::testing::PrintToString(notes.notes);
    EXPECT_EQ(Says(notes, "the blocks are sent"), blocked) << ::testing::PrintToString(notes.notes);
    EXPECT_EQ(Says(notes, "the daemons build their own blocks"), !blocked)
        << ::testing::PrintToString(notes.notes);
    ASSERT_EQ(plan->slices.size(), 3u);
    for (std::string_view slice : plan->slices) {
      // (A tridiagonal system's rows can move: each slice comes wrapped with the bandwidth.)
      ASSERT_TRUE(plan->items_in_chain);
      auto unwrapped = DecodeMovableSlice(slice);
      ASSERT_TRUE(unwrapped.ok());
      slice = unwrapped->slice;
      ASSERT_EQ(IsBlockOutline(slice), !blocked);
      if (blocked) {
        EXPECT_TRUE(DecodeBlock(slice).ok());
      } else {
        // The cache the outline names is complete by the time the plan is returned.
        auto outline = DecodeBlockOutline(slice);
        ASSERT_TRUE(outline.ok());
        auto block = BuildBlockFromCache(std::move(*outline));
        ASSERT_TRUE(block.ok()) << block.status().ToString();
        EXPECT_GE(block->size(), 100);
      }
    }
  }
}

}  // namespace
}  // namespace aiac::cg
