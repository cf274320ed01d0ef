// Partitions of a matrix into task blocks: METIS parts balanced by work and cutting fewer
// couplings than contiguous slices of a scrambled grid, contiguous slices as before, and blocks
// extended by layers of the matrix graph.
#include "apps/cg/partition.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

namespace aiac::cg {
namespace {

// The 5-point Laplacian of a k x k grid, its rows numbered by `perm` (identity when empty).
SpMat Grid(int k, const std::vector<int>& perm = {}) {
  const int n = k * k;
  auto at = [&](int r) { return perm.empty() ? r : perm[static_cast<size_t>(r)]; };
  std::vector<Eigen::Triplet<double>> t;
  for (int i = 0; i < k; ++i) {
    for (int j = 0; j < k; ++j) {
      const int r = i * k + j;
      t.emplace_back(at(r), at(r), 4.0);
      if (i > 0) t.emplace_back(at(r), at(r - k), -1.0);
      if (i + 1 < k) t.emplace_back(at(r), at(r + k), -1.0);
      if (j > 0) t.emplace_back(at(r), at(r - 1), -1.0);
      if (j + 1 < k) t.emplace_back(at(r), at(r + 1), -1.0);
    }
  }
  SpMat a(n, n);
  a.setFromTriplets(t.begin(), t.end());
  a.makeCompressed();
  return a;
}

void ExpectConsistent(const RowPartition& p, int n, int tasks) {
  ASSERT_EQ(p.owner.size(), static_cast<size_t>(n));
  ASSERT_EQ(p.rows.size(), static_cast<size_t>(tasks));
  size_t total = 0;
  for (int l = 0; l < tasks; ++l) {
    const auto& rows = p.rows[static_cast<size_t>(l)];
    EXPECT_FALSE(rows.empty());
    EXPECT_TRUE(std::is_sorted(rows.begin(), rows.end()));
    for (int r : rows) EXPECT_EQ(p.owner[static_cast<size_t>(r)], static_cast<uint32_t>(l));
    total += rows.size();
  }
  EXPECT_EQ(total, static_cast<size_t>(n));
}

TEST(PartitionTest, ContiguousSlicesAsBefore) {
  const RowPartition p = ContiguousPartition(10, 3);
  ExpectConsistent(p, 10, 3);
  EXPECT_EQ(p.rows[0], (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(p.rows[2], (std::vector<int>{6, 7, 8, 9}));
}

TEST(PartitionTest, MetisBalancesTheWorkAndCutsLessThanSlicesOfAScrambledGrid) {
  const int k = 40, n = k * k;
  std::vector<int> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), std::mt19937(7));
  const SpMat a = Grid(k, perm);
  for (int tasks : {2, 3, 4, 7}) {
    auto metis = MetisPartition(a, tasks);
    ASSERT_TRUE(metis.ok()) << metis.status().message();
    ExpectConsistent(*metis, n, tasks);
    // Balanced by the rows' stored entries (METIS's default tolerance is 3 %).
    std::vector<int64_t> work(static_cast<size_t>(tasks), 0);
    for (int r = 0; r < n; ++r)
      work[metis->owner[static_cast<size_t>(r)]] += a.outerIndexPtr()[r + 1] - a.outerIndexPtr()[r];
    const double mean = static_cast<double>(a.nonZeros()) / tasks;
    EXPECT_LE(static_cast<double>(*std::max_element(work.begin(), work.end())), 1.05 * mean)
        << tasks << " tasks";
    // Slices of a scrambled numbering cut nearly every coupling; METIS about k per boundary.
    const double metis_cut = CutFraction(a, *metis),
                 slices_cut = CutFraction(a, ContiguousPartition(n, tasks));
    EXPECT_LT(metis_cut * 5, slices_cut)
        << tasks << " tasks: " << metis_cut << " against " << slices_cut;
  }
  // The same input, the same partition (a run can be repeated).
  EXPECT_EQ(MetisPartition(a, 4)->owner, MetisPartition(a, 4)->owner);
  EXPECT_EQ(MetisPartition(a, 1)->rows[0].size(), static_cast<size_t>(n));
  EXPECT_FALSE(MetisPartition(a, n + 1).ok());
}

// Work (stored entries) of each part of `p`.
std::vector<double> PartWork(const SpMat& a, const RowPartition& p) {
  std::vector<double> work(p.rows.size(), 0);
  for (size_t l = 0; l < p.rows.size(); ++l) {
    for (int r : p.rows[l])
      work[l] += static_cast<double>(a.outerIndexPtr()[r + 1] - a.outerIndexPtr()[r]);
  }
  return work;
}

TEST(PartitionTest, SlicesFollowTheSharesAndKeepARowForEveryTask) {
  // Equal shares: exactly the equal slices.
  EXPECT_EQ(SliceStarts(10, 3, {2.0, 2.0, 2.0}), Partition(10, 3));
  EXPECT_EQ(SliceStarts(1000, 3, {1, 1, 3}), (std::vector<int>{0, 200, 400, 1000}));
  // A share too small for a row still gets one, and so does every task after it.
  EXPECT_EQ(SliceStarts(4, 4, {1e-9, 1e-9, 1e-9, 1}), (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(SliceStarts(5, 3, {100, 1e-9, 1e-9}), (std::vector<int>{0, 3, 4, 5}));
  // Every share pattern on small sizes: a valid split whose slices are within a row of n * share.
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> share(0.1, 5);
  for (int n = 1; n <= 40; ++n) {
    for (int tasks = 1; tasks <= std::min(n, 6); ++tasks) {
      std::vector<double> shares(static_cast<size_t>(tasks));
      for (auto& s : shares) s = share(rng);
      const auto starts = SliceStarts(n, tasks, shares);
      ASSERT_EQ(starts.size(), static_cast<size_t>(tasks) + 1);
      ASSERT_EQ(starts.front(), 0);
      ASSERT_EQ(starts.back(), n);
      const double total = std::accumulate(shares.begin(), shares.end(), 0.0);
      for (int l = 0; l < tasks; ++l) {
        ASSERT_LT(starts[l], starts[l + 1]) << n << " rows, " << tasks << " tasks";
        // Rows before each start: the rounded share, moved at most by the one-row floors.
        const double before = n * std::accumulate(shares.begin(), shares.begin() + l, 0.0) / total;
        EXPECT_LE(std::abs(starts[l] - before), tasks) << n << " rows, task " << l;
      }
      ExpectConsistent(ContiguousPartition(n, tasks, shares), n, tasks);
    }
  }
}

TEST(PartitionTest, SliceStartsTravelAndAreChecked) {
  const std::vector<int> starts{0, 5, 9, 20};
  auto back = DecodeSliceStarts(EncodeSliceStarts(starts), 20, 3);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, starts);
  EXPECT_FALSE(DecodeSliceStarts(EncodeSliceStarts(starts), 21, 3).ok());  // another n
  EXPECT_FALSE(DecodeSliceStarts(EncodeSliceStarts(starts), 20, 4).ok());  // another task count
  EXPECT_FALSE(DecodeSliceStarts(EncodeSliceStarts({0, 9, 5, 20}), 20, 3).ok());  // out of order
  EXPECT_FALSE(DecodeSliceStarts(EncodeSliceStarts({0, 5, 5, 20}), 20, 3).ok());  // an empty slice
  EXPECT_FALSE(DecodeSliceStarts("acgs", 20, 3).ok());
  EXPECT_FALSE(DecodeSliceStarts("", 20, 3).ok());
}

TEST(PartitionTest, MetisPartsFollowTheShares) {
  const SpMat a = Grid(60);
  const std::vector<double> shares{1, 1, 3, 5};
  auto p = MetisPartition(a, 4, shares);
  ASSERT_TRUE(p.ok()) << p.status().message();
  ExpectConsistent(*p, 3600, 4);
  const auto work = PartWork(a, *p);
  const double total = std::accumulate(work.begin(), work.end(), 0.0);
  for (size_t l = 0; l < shares.size(); ++l) {
    // METIS's default imbalance tolerance is 3 %; a little more for the discrete grid.
    EXPECT_NEAR(work[l] / total, shares[l] / 10.0, 0.05 * shares[l] / 10.0) << "part " << l;
  }
  // Equal shares are the unweighted partition.
  auto equal = MetisPartition(a, 4, {2, 2, 2, 2});
  auto plain = MetisPartition(a, 4);
  ASSERT_TRUE(equal.ok() && plain.ok());
  const auto w = PartWork(a, *equal);
  for (double x : w) EXPECT_NEAR(x / std::accumulate(w.begin(), w.end(), 0.0), 0.25, 0.0125);
}

TEST(PartitionTest, ExtendAddsLayersOfTheMatrixGraph) {
  const SpMat grid = Grid(10);  // rows i*10 + j
  // Row 55's block grown by one layer: its four grid neighbours; by two: the diamond of 13.
  EXPECT_EQ(Extend(grid, {55}, 0), (std::vector<int>{55}));
  EXPECT_EQ(Extend(grid, {55}, 1), (std::vector<int>{45, 54, 55, 56, 65}));
  EXPECT_EQ(Extend(grid, {55}, 2).size(), 13u);
  // A band of grid rows 3..4 (rows 30..49) grows by whole grid rows, and stops at the edges.
  std::vector<int> band(20);
  std::iota(band.begin(), band.end(), 30);
  std::vector<int> wider(40);
  std::iota(wider.begin(), wider.end(), 20);
  EXPECT_EQ(Extend(grid, band, 1), wider);
  EXPECT_EQ(Extend(grid, band, 50).size(), 100u);
}

// A block's own matrix: A's entries between its rows, renumbered 0.. in their order; the same
// as the dense restriction, for contiguous rows and for scattered ones.
TEST(PartitionTest, DiagonalBlockIsTheRestrictionOfTheMatrix) {
  const SpMat grid = Grid(10);
  const Eigen::MatrixXd dense(grid);
  const std::vector<std::vector<int>> cases = {{0}, {30, 31, 32, 33, 34, 35}, {3, 13, 14, 47, 99}};
  for (const auto& rows : cases) {
    const SpMat block = DiagonalBlock(grid, rows);
    ASSERT_EQ(block.rows(), static_cast<Eigen::Index>(rows.size()));
    ASSERT_EQ(block.cols(), static_cast<Eigen::Index>(rows.size()));
    for (size_t i = 0; i < rows.size(); ++i) {
      for (size_t j = 0; j < rows.size(); ++j) {
        EXPECT_EQ(block.coeff(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)),
                  dense(rows[i], rows[j]))
            << rows[i] << ", " << rows[j];
      }
    }
  }
}

}  // namespace
}  // namespace aiac::cg
