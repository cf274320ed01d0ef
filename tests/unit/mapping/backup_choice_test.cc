#include "mapping/backup_choice.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <set>

namespace aiac::mapping {
namespace {

int MaxLoad(const std::vector<std::vector<int>>& backups, size_t daemons) {
  std::vector<int> load(daemons, 0);
  for (const auto& b : backups) {
    for (int d : b) ++load[d];
  }
  return *std::max_element(load.begin(), load.end());
}

// Every choice that keeps the rules (other tasks' daemons only, the right count, the task's
// cluster first): the smallest possible largest load, by enumeration.
int BruteForceBestMaxLoad(const std::vector<int>& daemon_of_task, const std::vector<int>& cluster,
                          int k) {
  const int tasks = static_cast<int>(daemon_of_task.size());
  std::vector<std::vector<std::vector<int>>> options(tasks);
  for (int t = 0; t < tasks; ++t) {
    std::vector<int> same, other;
    for (int u = 0; u < tasks; ++u) {
      if (u == t) continue;
      const int d = daemon_of_task[u];
      (cluster[d] == cluster[daemon_of_task[t]] ? same : other).push_back(d);
    }
    const int want = std::min<int>(k, tasks - 1);
    std::vector<int> all = same;
    all.insert(all.end(), other.begin(), other.end());
    for (int mask = 0; mask < (1 << all.size()); ++mask) {
      if (__builtin_popcount(mask) != want) continue;
      std::vector<int> pick;
      int same_picked = 0;
      for (size_t i = 0; i < all.size(); ++i) {
        if (mask & (1 << i)) {
          pick.push_back(all[i]);
          if (i < same.size()) ++same_picked;
        }
      }
      if (same_picked < std::min<int>(want, static_cast<int>(same.size()))) continue;
      options[t].push_back(pick);
    }
  }
  int best = 1 << 30;
  std::vector<std::vector<int>> current(tasks);
  std::function<void(int)> go = [&](int t) {
    if (t == tasks) {
      best = std::min(best, MaxLoad(current, cluster.size()));
      return;
    }
    for (const auto& o : options[t]) {
      current[t] = o;
      go(t + 1);
    }
  };
  go(0);
  return best;
}

TEST(BackupChoiceTest, UniformPlatformGivesEveryDaemonExactlyK) {
  const std::vector<int> daemon_of_task = {0, 1, 2, 3, 4, 5};
  const std::vector<int> cluster(6, 0);
  auto b = ChooseBackups(daemon_of_task, cluster, 2);
  EXPECT_EQ(b[0], (std::vector<int>{1, 2}));
  EXPECT_EQ(b[5], (std::vector<int>{0, 1}));
  std::vector<int> load(6, 0);
  for (const auto& x : b) {
    for (int d : x) ++load[d];
  }
  EXPECT_EQ(load, std::vector<int>(6, 2));
}

TEST(BackupChoiceTest, NoOtherTaskMeansNoBackup) {
  EXPECT_TRUE(ChooseBackups({3}, {0, 0, 0, 0}, 2)[0].empty());
  EXPECT_TRUE(ChooseBackups({0, 1}, {0, 0}, 0)[1].empty());
}

// Every placement of up to 5 tasks on 6 daemons in two clusters, k = 0..3: the rules hold, and
// the largest load is within one of the best possible.
TEST(BackupChoiceTest, ExhaustiveSmallInstancesKeepTheRulesAndNearBestBalance) {
  int instances = 0, optimal = 0;
  for (int tasks = 1; tasks <= 5; ++tasks) {
    for (int clusters = 0; clusters < (1 << 6); ++clusters) {
      std::vector<int> cluster(6);
      for (int d = 0; d < 6; ++d) cluster[d] = (clusters >> d) & 1;
      // Tasks on daemons 1, 2, ...: daemon 0 is a spare that must never be chosen.
      std::vector<int> daemon_of_task(tasks);
      for (int t = 0; t < tasks; ++t) daemon_of_task[t] = t + 1;
      for (int k = 0; k <= 3; ++k) {
        auto b = ChooseBackups(daemon_of_task, cluster, k);
        ASSERT_EQ(b.size(), static_cast<size_t>(tasks));
        for (int t = 0; t < tasks; ++t) {
          const auto& mine = b[t];
          ASSERT_EQ(mine.size(), static_cast<size_t>(std::min(k, tasks - 1)));
          EXPECT_EQ(std::set<int>(mine.begin(), mine.end()).size(), mine.size());
          int same_available = 0, same_chosen = 0;
          for (int u = 0; u < tasks; ++u) {
            if (u != t && cluster[daemon_of_task[u]] == cluster[daemon_of_task[t]])
              ++same_available;
          }
          for (int d : mine) {
            EXPECT_NE(d, daemon_of_task[t]);
            EXPECT_NE(d, 0) << "a spare was chosen";
            if (cluster[d] == cluster[daemon_of_task[t]]) ++same_chosen;
          }
          EXPECT_EQ(same_chosen, std::min<int>(same_available, static_cast<int>(mine.size())));
        }
        if (k == 0 || tasks == 1) continue;
        const int best = BruteForceBestMaxLoad(daemon_of_task, cluster, k);
        const int got = MaxLoad(b, cluster.size());
        EXPECT_LE(got, best + 1) << tasks << " tasks, clusters " << clusters << ", k " << k;
        ++instances;
        if (got == best) ++optimal;
      }
    }
  }
  // Greedy, not optimal: it should still be the best possible in the vast majority of cases.
  EXPECT_GE(optimal * 10, instances * 9) << optimal << " of " << instances;
}

}  // namespace
}  // namespace aiac::mapping
