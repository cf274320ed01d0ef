// The synthetic workload: its costs move with the phases, its checksum does not depend on how
// the items are split, stepped or restored, and its wire formats refuse what is not theirs.
#include <gtest/gtest.h>

#include <numeric>
#include <set>

#include "apps/synthetic/synthetic_app.h"
#include "apps/synthetic/workload.h"

namespace aiac::synthetic {
namespace {

WorkloadSpec Small() {
  WorkloadSpec s;
  s.items = 997;
  s.iterations = 23;
  s.base_cost = 3;
  s.phase_iterations = 5;
  s.hot_fraction = 0.3;
  s.hot_factor = 5;
  s.seed = 42;
  return s;
}

app::JobParams Params(const WorkloadSpec& s, uint32_t tasks) {
  app::JobParams p;
  p.tasks = tasks;
  p.values = {{"items", std::to_string(s.items)},
              {"iterations", std::to_string(s.iterations)},
              {"base_cost", std::to_string(s.base_cost)},
              {"phase_iterations", std::to_string(s.phase_iterations)},
              {"hot_fraction", "0.3"},
              {"hot_factor", std::to_string(s.hot_factor)},
              {"seed", std::to_string(s.seed)}};
  return p;
}

// Runs every task of `plan` to its end, in turns of `turn` iterations, saving and restoring each
// task's state between turns when `restore`; returns the gathered report.
app::GatherReport RunAll(SyntheticApp& app, const app::JobParams& params, const app::JobPlan& plan,
                         int turn, bool restore) {
  std::vector<std::unique_ptr<app::Task>> tasks;
  for (uint32_t t = 0; t < plan.slices.size(); ++t) {
    auto task = app.MakeTask(params, t, plan.slices[t]);
    EXPECT_TRUE(task.ok()) << task.status().message();
    tasks.push_back(std::move(*task));
  }
  for (bool busy = true; busy;) {
    busy = false;
    for (auto& task : tasks) {
      for (int k = 0; k < turn; ++k) {
        auto stepped = task->Iterate();
        EXPECT_TRUE(stepped.ok());
        busy = busy || *stepped;
      }
      if (restore) {
        const std::string state = task->SaveState();
        auto fresh = app.MakeTask(params, 0, plan.slices[0]);  // any items: the state replaces them
        EXPECT_TRUE((*fresh)->RestoreState(state).ok());
        task = std::move(*fresh);
      }
    }
  }
  std::vector<std::string> slices;
  for (auto& task : tasks) {
    EXPECT_TRUE(task->LocallyConverged());
    EXPECT_EQ(task->LocalChange(), 0);
    slices.push_back(task->ResultSlice());
  }
  auto report = app.Gather(params, slices);
  EXPECT_TRUE(report.ok()) << report.status().message();
  return *report;
}

TEST(SyntheticWorkloadTest, TheHotWindowMovesWithThePhasesAndCostsHotFactorTimesTheBase) {
  const WorkloadSpec s = Small();
  const auto width = static_cast<uint32_t>(s.hot_fraction * s.items);
  std::set<uint32_t> starts;
  for (uint32_t phase = 0; phase < 20; ++phase) {
    starts.insert(HotStart(s, phase));
    uint32_t hot = 0;
    for (uint32_t i = 0; i < s.items; ++i) {
      const uint32_t c = StepCost(s, i, phase * s.phase_iterations);
      EXPECT_TRUE(c == s.base_cost || c == s.base_cost * s.hot_factor);
      hot += c != s.base_cost;
      // Every step of a phase costs the same.
      EXPECT_EQ(c, StepCost(s, i, phase * s.phase_iterations + s.phase_iterations - 1));
    }
    EXPECT_EQ(hot, width) << "phase " << phase;
    // The window starts where HotStart says, and wraps round.
    EXPECT_EQ(StepCost(s, HotStart(s, phase), phase * s.phase_iterations),
              s.base_cost * s.hot_factor);
    EXPECT_EQ(StepCost(s, (HotStart(s, phase) + width) % s.items, phase * s.phase_iterations),
              s.base_cost);
  }
  EXPECT_GT(starts.size(), 15u);  // it moves
}

TEST(SyntheticWorkloadTest, TheChecksumIsTheSameWhateverTheSplitTheTurnsOrTheRestores) {
  const WorkloadSpec s = Small();
  const uint64_t expected = ExpectedChecksum(s);
  for (uint32_t tasks : {1u, 3u, 7u}) {
    SyntheticApp app;
    const auto params = Params(s, tasks);
    auto plan = app.Prepare(params);
    ASSERT_TRUE(plan.ok()) << plan.status().message();
    for (auto [turn, restore] : {std::pair{1, false}, {4, true}, {100, false}}) {
      const auto report = RunAll(app, params, *plan, turn, restore);
      EXPECT_EQ(report.status, app::GatherStatus::kConverged) << report.error;
      EXPECT_EQ(report.numbers.at("checksum"), static_cast<double>(expected));
      EXPECT_EQ(report.numbers.at("items"), s.items);
    }
    // Uneven shares (Reweigh) give the same answer.
    std::vector<double> powers(tasks);
    std::iota(powers.begin(), powers.end(), 1.0);
    auto reweighed = app.Reweigh(params, powers);
    ASSERT_TRUE(reweighed.ok() && reweighed->has_value());
    EXPECT_EQ(RunAll(app, params, **reweighed, 2, false).numbers.at("checksum"),
              static_cast<double>(expected));
  }
}

TEST(SyntheticWorkloadTest, SplitsCoverEveryItemOnceInProportionToTheShares) {
  for (uint32_t items : {1u, 2u, 10u, 1000u}) {
    for (uint32_t tasks = 1; tasks <= std::min(items, 9u); ++tasks) {
      for (bool uneven : {false, true}) {
        std::vector<double> shares;
        if (uneven) {
          for (uint32_t t = 0; t < tasks; ++t) shares.push_back(t % 3 == 0 ? 3.0 : 1.0);
        }
        const auto split = SplitItems(items, tasks, shares);
        ASSERT_EQ(split.size(), tasks);
        uint32_t next = 0;
        for (uint32_t t = 0; t < tasks; ++t) {
          ASSERT_EQ(split[t].size(), 1u)
              << items << " items, " << tasks << " tasks: task " << t << " has none";
          EXPECT_EQ(split[t][0].first, next);
          next = split[t][0].second;
          auto ranges = DecodeRanges(EncodeRanges(split[t]), items);
          ASSERT_TRUE(ranges.ok());
          EXPECT_EQ(*ranges, split[t]);
        }
        EXPECT_EQ(next, items);
      }
    }
  }
  const auto split = SplitItems(6000, 3, {1, 1, 4});
  EXPECT_EQ(split[2][0].second - split[2][0].first, 4000u);
}

TEST(SyntheticWorkloadTest, GatherRefusesMissingDuplicatedOrUnfinishedItems) {
  const WorkloadSpec s = Small();
  SyntheticApp app;
  const auto params = Params(s, 2);
  auto plan = app.Prepare(params);
  ASSERT_TRUE(plan.ok());
  auto t0 = app.MakeTask(params, 0, plan->slices[0]);
  auto t1 = app.MakeTask(params, 1, plan->slices[1]);
  ASSERT_TRUE(t0.ok() && t1.ok());
  while (*(*t0)->Iterate() || *(*t1)->Iterate()) {
  }
  const std::string a = (*t0)->ResultSlice(), b = (*t1)->ResultSlice();
  EXPECT_EQ(app.Gather(params, {a, b})->status, app::GatherStatus::kConverged);
  auto twice = app.Gather(params, {a, a});
  EXPECT_EQ(twice->status, app::GatherStatus::kDiverged);
  EXPECT_NE(twice->error.find("missing"), std::string::npos) << twice->error;
  auto fresh = app.MakeTask(params, 1, plan->slices[1]);
  EXPECT_EQ(app.Gather(params, {a, (*fresh)->ResultSlice()})->status,
            app::GatherStatus::kUnconverged);
  EXPECT_FALSE(app.Gather(params, {a, b.substr(0, b.size() - 1)}).ok());
}

TEST(SyntheticWorkloadTest, BadParametersAndSlicesAreRefusedWithTheirName) {
  const WorkloadSpec s = Small();
  SyntheticApp app;
  for (auto [key, value] : std::vector<std::pair<std::string, std::string>>{{"items", "0"},
                                                                            {"iterations", "x"},
                                                                            {"hot_fraction", "1.5"},
                                                                            {"verify", "yes"},
                                                                            {"colour", "red"}}) {
    auto params = Params(s, 2);
    params.values[key] = value;
    auto plan = app.Prepare(params);
    ASSERT_FALSE(plan.ok()) << key;
    EXPECT_NE(plan.status().message().find(key), std::string::npos) << plan.status().message();
  }
  auto params = Params(s, 2);
  params.tasks = s.items + 1;
  EXPECT_FALSE(app.Prepare(params).ok());
  params.tasks = 2;
  EXPECT_FALSE(app.MakeTask(params, 0, "garbage").ok());
  EXPECT_FALSE(DecodeRanges(EncodeRanges({{5, 3}}), s.items).ok());
  EXPECT_FALSE(DecodeRanges(EncodeRanges({{0, 5}, {4, 8}}), s.items).ok());
  EXPECT_FALSE(DecodeRanges(EncodeRanges({{0, s.items + 1}}), s.items).ok());
  EXPECT_FALSE(DecodeItems(EncodeItems({{s.items, 0, 0}}), s).ok());
  EXPECT_FALSE(DecodeItems(EncodeItems({{0, s.iterations + 1, 0}}), s).ok());
}

// Items that carry data (item_bytes) travel with it, and damaged data is refused.
TEST(SyntheticWorkloadTest, ItemsCarryTheirDataAndDamageIsFound) {
  WorkloadSpec s;
  s.items = 10;
  s.item_bytes = 21;  // not a whole number of words
  const std::vector<Item> items{{3, 1, 77}, {9, 0, 5}};
  std::string bytes = EncodeItems(items, s.item_bytes);
  EXPECT_EQ(bytes.size(), 8u + 2 * (16 + 21));
  auto back = DecodeItems(bytes, s);
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->size(), 2u);
  EXPECT_EQ((*back)[1].id, 9u);
  EXPECT_EQ((*back)[1].state, 5u);
  bytes[8 + 16 + 20] ^= 1;  // the last byte of item 3's data
  EXPECT_NE(DecodeItems(bytes, s).status().message().find("item 3's data is damaged"),
            std::string::npos);
  s.item_bytes = 0;
  EXPECT_FALSE(DecodeItems(EncodeItems(items, 21), s).ok()) << "another size";
}

// Items moved back and forth between two running tasks (API 4) come back with the checksum of
// the run that moved nothing; the counts add up at every moment, and work is measured.
TEST(SyntheticWorkloadTest, ItemsMovedBetweenRunningTasksKeepTheChecksum) {
  const WorkloadSpec s = Small();
  SyntheticApp app;
  const auto params = Params(s, 2);
  auto plan = app.Prepare(params);
  ASSERT_TRUE(plan.ok());
  auto made_a = app.MakeTask(params, 0, plan->slices[0]);
  auto made_b = app.MakeTask(params, 1, plan->slices[1]);
  ASSERT_TRUE(made_a.ok() && made_b.ok());
  std::unique_ptr<app::Task> a = std::move(*made_a), b = std::move(*made_b);
  EXPECT_EQ(a->ItemCount() + b->ItemCount(), s.items);
  EXPECT_EQ(a->WorkDone(), 0);
  const double total = a->RemainingWork() + b->RemainingWork();
  EXPECT_GT(total, 0);
  for (int round = 0; round < 30; ++round) {
    (void)a->Iterate();
    (void)a->Iterate();
    (void)b->Iterate();
    app::Task* from = round % 3 == 0 ? b.get() : a.get();
    app::Task* to = round % 3 == 0 ? a.get() : b.get();
    const int64_t before = from->ItemCount();
    const double want = from->RemainingWork() * 0.3;
    auto moved = from->ExportItems(want, 1);
    ASSERT_TRUE(moved.ok()) << moved.status().message();
    EXPECT_LE(before - from->ItemCount(), before);
    ASSERT_TRUE(to->ImportItems(*moved).ok());
    EXPECT_EQ(a->ItemCount() + b->ItemCount(), s.items);
    // The same items again are refused, and change nothing.
    if (from->ItemCount() < before) {
      EXPECT_FALSE(to->ImportItems(*moved).ok());
      EXPECT_EQ(a->ItemCount() + b->ItemCount(), s.items);
    }
  }
  while (*a->Iterate() || *b->Iterate()) {
  }
  EXPECT_GT(a->WorkDone(), 0);
  EXPECT_EQ(a->RemainingWork() + b->RemainingWork(), 0);
  auto report = app.Gather(params, {a->ResultSlice(), b->ResultSlice()});
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->status, app::GatherStatus::kConverged) << report->error;
  EXPECT_EQ(report->numbers.at("checksum"), static_cast<double>(ExpectedChecksum(s)));
  // Nothing to give for no work; everything for all of it.
  auto none = a->ExportItems(0, 1);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(DecodeItems(*none, s)->size(), 0u);
  EXPECT_FALSE(a->ImportItems("not items").ok());
}

TEST(SyntheticWorkloadTest, VerifyComputesTheChecksumAgainAndNamesAWrongOne) {
  WorkloadSpec s = Small();
  SyntheticApp app;
  auto params = Params(s, 1);
  params.values["verify"] = "true";
  auto plan = app.Prepare(params);
  ASSERT_TRUE(plan.ok());
  auto task = app.MakeTask(params, 0, plan->slices[0]);
  while (*(*task)->Iterate()) {
  }
  auto report = app.Gather(params, {(*task)->ResultSlice()});
  EXPECT_EQ(report->status, app::GatherStatus::kConverged);
  EXPECT_EQ(report->numbers.at("expected_checksum"), report->numbers.at("checksum"));
  // Another seed's workload: the same items, finished, but not this workload's states.
  params.values["seed"] = "43";
  auto other = app.Gather(params, {(*task)->ResultSlice()});
  EXPECT_EQ(other->status, app::GatherStatus::kDiverged);
  EXPECT_NE(other->error.find("checksum"), std::string::npos);
}

}  // namespace
}  // namespace aiac::synthetic
