#include "redistribution/ring.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <random>
#include <set>

namespace aiac::redistribution {
namespace {

// Every item accounted for, one-port respected, runs without pause, final loads right.
void CheckSchedule(const RingInput& in, const RingPlan& p, const std::string& what) {
  const int n = static_cast<int>(in.loads.size());
  std::vector<int64_t> load = in.loads;
  std::map<int, std::vector<std::pair<double, double>>> sends, receives;
  for (const auto& t : p.transfers) {
    ASSERT_TRUE(t.to == (t.from + 1) % n || t.to == (t.from + n - 1) % n) << what;
    ASSERT_TRUE(in.bidirectional || t.to == (t.from + 1) % n) << what;
    ASSERT_GT(t.items, 0) << what;
    // Runs without pause: a transfer carries its items back to back at its link's cost per item.
    // (On a bidirectional ring of two the link of a transfer cannot be told from its ends.)
    if (n > 2 || !in.bidirectional) {
      const double cost = t.to == (t.from + 1) % n ? in.c_next[t.from] : in.c_prev[t.from];
      ASSERT_NEAR(t.end - t.start, static_cast<double>(t.items) * cost, 1e-9 * (1 + t.end))
          << what << ": P" << t.from << " -> P" << t.to << " paused";
    }
    load[t.from] -= t.items;
    load[t.to] += t.items;
    sends[t.from].push_back({t.start, t.end});
    receives[t.to].push_back({t.start, t.end});
    ASSERT_LE(t.end, p.time + 1e-9) << what;
  }
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(load[i], in.loads[i] - in.delta[i]) << what << " processor " << i;
  auto no_overlap = [&](std::vector<std::pair<double, double>> v) {
    std::sort(v.begin(), v.end());
    for (size_t k = 1; k < v.size(); ++k) {
      if (v[k].first < v[k - 1].second - 1e-9) return false;
    }
    return true;
  };
  for (auto& [i, v] : sends)
    ASSERT_TRUE(no_overlap(v)) << what << ": P" << i << " sends twice at once";
  if (in.bidirectional) {
    for (auto& [i, v] : receives)
      ASSERT_TRUE(no_overlap(v)) << what << ": P" << i << " receives twice at once";
  }
}

RingInput RandomRing(std::mt19937& rng, int n, bool bi, bool homogeneous, int spread) {
  RingInput in;
  in.bidirectional = bi;
  in.loads.resize(n);
  in.delta.resize(n);
  int64_t sum = 0;
  for (int i = 0; i < n; ++i) {
    in.loads[i] = 1 + static_cast<int64_t>(rng() % (2 * spread + 4));
    in.delta[i] = static_cast<int64_t>(rng() % (2 * spread + 1)) - spread;
  }
  for (int i = 0; i < n; ++i) sum += in.delta[i];
  in.delta[0] -= sum;  // conservation
  for (int i = 0; i < n; ++i) {
    // Loads of at least 1 before and after.
    in.loads[i] = std::max<int64_t>(in.loads[i], std::max<int64_t>(1, in.delta[i] + 1));
  }
  const double c = 1.5;
  for (int i = 0; i < n; ++i) {
    in.c_next.push_back(homogeneous ? c : 0.5 + (rng() % 8) * 0.25);
    if (bi) in.c_prev.push_back(homogeneous ? c : 0.5 + (rng() % 8) * 0.25);
  }
  return in;
}

// Algorithm 3 evaluated literally, slice by slice (O(n^2) per step): the reference the planner's
// prefix-sum version must equal.
std::vector<std::vector<std::pair<int, int>>> Algorithm3Literal(std::vector<int64_t> delta) {
  const int n = static_cast<int>(delta.size());
  auto mod = [n](int a) { return ((a % n) + n) % n; };
  std::vector<std::vector<std::pair<int, int>>> steps;
  for (;;) {
    int64_t dmax = 0;
    for (int k = 0; k < n; ++k) {
      dmax = std::max(dmax, std::abs(delta[k]));
      for (int l = 1; l < n; ++l)
        dmax = std::max(dmax, (std::abs(SliceImbalance(delta, k, l)) + 1) / 2);
    }
    if (dmax < 1) break;
    std::set<std::pair<int, int>> sends;
    for (int k = 0; k < n; ++k) {
      for (int len = 1; len < n; ++len) {
        const int l = mod(k + len - 1);
        const int64_t d = SliceImbalance(delta, k, len - 1);
        if (dmax != 2) {
          if (d > 1 && (d + 1) / 2 == dmax) {
            sends.insert({k, mod(k - 1)});
            sends.insert({l, mod(l + 1)});
          }
          if (d < -1 && (-d + 1) / 2 == dmax) {
            sends.insert({mod(k - 1), k});
            sends.insert({mod(l + 1), l});
          }
        } else {
          if (d >= 3) sends.insert({l, mod(l + 1)});
          if (d == 4) sends.insert({k, mod(k - 1)});
          if (d <= -3) sends.insert({mod(k - 1), k});
          if (d == -4) sends.insert({mod(l + 1), l});
        }
      }
    }
    auto sending = [&](int i) {
      for (auto& e : sends)
        if (e.first == i) return true;
      return false;
    };
    auto receiving = [&](int i) {
      for (auto& e : sends)
        if (e.second == i) return true;
      return false;
    };
    for (int i = 0; i < n; ++i)
      if (delta[i] == dmax && !sending(i)) sends.insert({i, mod(i + 1)});
    for (int i = 0; i < n; ++i)
      if (delta[i] == -dmax && !receiving(i)) sends.insert({mod(i - 1), i});
    if (dmax == 1) {
      for (bool grew = true; grew;) {
        grew = false;
        for (int i = 0; i < n; ++i) {
          if (delta[i] != 0) continue;
          if (sends.count({mod(i - 1), i}) && sends.insert({i, mod(i + 1)}).second) grew = true;
          if (sends.count({mod(i + 1), i}) && sends.insert({i, mod(i - 1)}).second) grew = true;
        }
      }
    }
    for (const auto& [from, to] : sends) {
      --delta[from];
      ++delta[to];
    }
    steps.emplace_back(sends.begin(), sends.end());
  }
  return steps;
}

TEST(RingTest, Algorithm3MatchesItsLiteralEvaluation) {
  std::mt19937 rng(21);
  for (int trial = 0; trial < 500; ++trial) {
    const int n = 2 + trial % 9;
    std::vector<int64_t> d(n);
    int64_t sum = 0;
    for (auto& v : d) sum += (v = static_cast<int64_t>(rng() % 13) - 6);
    d[0] -= sum;
    ASSERT_EQ(Algorithm3Steps(d), Algorithm3Literal(d)) << "trial " << trial;
  }
}

TEST(RingTest, SliceImbalancesAndBounds) {
  std::vector<int64_t> d = {3, -5, 4, -2};
  EXPECT_EQ(SliceImbalance(d, 2, 2), 5);  // P2, P3, P0: 4 - 2 + 3
  EXPECT_EQ(MaxSliceImbalance(d), 5);
  // Flows from start = 2: P2 sends 4, P3 sends 2, P0 sends 5, P1 sends 0.
  EXPECT_EQ(UnidirectionalFlows(d), (std::vector<int64_t>{5, 0, 4, 2}));
  // Lemma 3: max(|delta_i| = 5, ceil(5 / 2) = 3) = 5.
  EXPECT_EQ(BidirectionalHomogeneousBound(d), 5);
  EXPECT_EQ(BidirectionalHomogeneousBound({2, 2, -2, -2}), 2);  // ceil(4/2), |delta_i| = 2
}

TEST(RingTest, HandWorkedHomogeneousUnidirectional) {
  RingInput in{false, {10, 1, 10, 3}, {3, -5, 4, -2}, {2, 2, 2, 2}, {}};
  ASSERT_TRUE(CheckRingInput(in).ok());
  auto p = PlanRing(in);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->ring_case, "uni-hom");
  EXPECT_EQ(p->lower_bound, 10);  // Lemma 1: 5 x 2
  EXPECT_EQ(p->time, 10);
  EXPECT_TRUE(p->optimal);
  EXPECT_FALSE(p->light.has_value());
  CheckSchedule(in, *p, "hand");
}

TEST(RingTest, BadInputNamed) {
  auto msg = [](RingInput in) { return CheckRingInput(in).message(); };
  EXPECT_EQ(msg({false, {1}, {0}, {1}, {}}), "a ring needs at least 2 processors");
  EXPECT_EQ(msg({false, {2, 2}, {1, 0}, {1, 1}, {}}), "the sum of delta is 1, not 0");
  EXPECT_EQ(msg({false, {2, 2, 2}, {1, -1}, {1, 1, 1}, {}}),
            "loads, delta and c_next must have the same length (3)");
  EXPECT_EQ(msg({false, {0, 2}, {0, 0}, {1, 1}, {}}), "processor 0 holds less than 1 item before");
  EXPECT_EQ(msg({false, {2, 2}, {2, -2}, {1, 1}, {}}),
            "processor 0 would hold less than 1 item after");
  EXPECT_EQ(msg({false, {2, 2}, {1, -1}, {1, 0}, {}}), "c_next must be positive");
  EXPECT_EQ(msg({true, {2, 2}, {1, -1}, {1, 1}, {}}),
            "c_prev is required for a bidirectional ring");
}

TEST(RingTest, UnidirectionalRandomRingsMeetTheirBounds) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 400; ++trial) {
    const int n = 2 + trial % 8;
    const bool hom = trial % 2 == 0;
    RingInput in = RandomRing(rng, n, false, hom, 6);
    ASSERT_TRUE(CheckRingInput(in).ok()) << CheckRingInput(in).message();
    auto p = PlanRing(in);
    ASSERT_TRUE(p.ok()) << p.status().message();
    const bool equal = std::all_of(in.c_next.begin(), in.c_next.end(),
                                   [&](double c) { return c == in.c_next[0]; });
    EXPECT_EQ(p->ring_case, equal ? "uni-hom" : "uni-het");
    // Theorems 1 and 2: the replayed schedule takes exactly the bound (Lemma 1, Lemma 2).
    ASSERT_NEAR(p->time, p->lower_bound, 1e-9) << "trial " << trial;
    ASSERT_TRUE(p->optimal);
    CheckSchedule(in, *p, "uni trial " + std::to_string(trial));
    // Independent optimality check: a unidirectional schedule moves S_i + k items over link i
    // for some k >= 0 (conservation), so it takes at least max_i (S_i + k) c_i >= our time.
    const auto flows = UnidirectionalFlows(in.delta);
    for (int64_t k = 0; k <= 3; ++k) {
      double need = 0;
      for (int i = 0; i < n; ++i)
        need = std::max(need, static_cast<double>(flows[i] + k) * in.c_next[i]);
      ASSERT_GE(need + 1e-9, p->time) << "trial " << trial;
    }
    // Lemma 1 is a bound for any schedule: the optimum is at least it even heterogeneous.
    double lemma1 = 0;
    for (int k = 0; k < n; ++k)
      for (int l = 0; l < n; ++l) {
        const int64_t s = std::abs(SliceImbalance(in.delta, k, l));
        lemma1 = std::max(lemma1, static_cast<double>(s) * in.c_next[(k + l) % n]);
      }
    ASSERT_GE(p->time + 1e-9, hom ? lemma1 : 0);
  }
}

TEST(RingTest, BidirectionalHomogeneousRingsFollowAlgorithm3) {
  std::mt19937 rng(5);
  int met = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const int n = 2 + trial % 8;
    RingInput in = RandomRing(rng, n, true, true, 5);
    auto steps = Algorithm3Steps(in.delta);
    // Theorem 3: one step per unit of the Lemma 3 bound, one-port in each step, balance reached.
    ASSERT_EQ(static_cast<int64_t>(steps.size()), BidirectionalHomogeneousBound(in.delta))
        << "trial " << trial;
    std::vector<int64_t> d = in.delta;
    for (const auto& step : steps) {
      std::map<int, int> out, in_count;
      std::string where = "trial " + std::to_string(trial) + " delta";
      for (auto v : in.delta) where += " " + std::to_string(v);
      where += " step";
      for (const auto& [from, to] : step)
        where += " " + std::to_string(from) + ">" + std::to_string(to);
      for (const auto& [from, to] : step) {
        ASSERT_LE(++out[from], 1) << where << ": a processor sends twice in one step";
        ASSERT_LE(++in_count[to], 1) << where << ": a processor receives twice in one step";
        --d[from];
        ++d[to];
      }
    }
    for (int64_t v : d) ASSERT_EQ(v, 0) << "trial " << trial;
    auto p = PlanRing(in);
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_EQ(p->ring_case, "bi-hom");
    ASSERT_GE(p->time, p->lower_bound - 1e-9) << "trial " << trial;
    ASSERT_EQ(p->optimal, std::abs(p->time - p->lower_bound) < 1e-9);
    met += p->optimal;
    CheckSchedule(in, *p, "bi-hom trial " + std::to_string(trial));
    // With items to spare everywhere, Algorithm 3's synchronous steps run as written: Theorem 3.
    RingInput rich = in;
    int64_t total = 0;
    for (int64_t v : in.delta) total += std::abs(v);
    for (auto& l : rich.loads) l += total;
    auto q = PlanRing(rich);
    ASSERT_TRUE(q.ok());
    ASSERT_NEAR(q->time, q->lower_bound, 1e-9) << "trial " << trial;
    ASSERT_TRUE(q->optimal);
  }
  std::printf("bi-hom: %d of 400 random rings at the Lemma 3 bound with their own loads\n", met);
  EXPECT_GT(met, 300);
}

TEST(RingTest, Algorithm3AsWrittenCanAskForItemsNotHeldYet) {
  // P0 takes one item from P4 in each of Algorithm 3's first five steps, but P4 holds 3 and
  // receives nothing before step 6: the synchronous steps cannot run as written. The planner
  // replays them, sees 10 > 8, and returns the circulation plan, which meets Lemma 3.
  RingInput in{true, {1, 2, 4, 3, 3}, {-8, 1, 3, 2, 2}, {1, 1, 1, 1, 1}, {1, 1, 1, 1, 1}};
  auto steps = Algorithm3Steps(in.delta);
  ASSERT_EQ(steps.size(), 8u);
  for (int s = 0; s < 5; ++s) EXPECT_EQ(steps[s], (std::vector<std::pair<int, int>>{{4, 0}}));
  std::vector<std::vector<RingOp>> ops(5);
  for (size_t s = 0; s < steps.size(); ++s)
    for (auto [from, to] : steps[s])
      ops[from].push_back({to == (from + 1) % 5, 1, static_cast<double>(s)});
  EXPECT_EQ(SimulateRing(in.loads, in.c_next, in.c_prev, true, ops).makespan, 10);
  auto p = PlanRing(in);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->lower_bound, 8);
  EXPECT_EQ(p->time, 8);
  EXPECT_TRUE(p->optimal);
  CheckSchedule(in, *p, "paper case");
}

TEST(RingTest, BidirectionalHeterogeneousAgainstExhaustiveCirculations) {
  std::mt19937 rng(7);
  int light_cases = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 2 + trial % 8;
    RingInput in = RandomRing(rng, n, true, false, 5);
    if (std::all_of(in.c_next.begin(), in.c_next.end(),
                    [&](double c) { return c == in.c_next[0]; }) &&
        std::all_of(in.c_prev.begin(), in.c_prev.end(),
                    [&](double c) { return c == in.c_next[0]; })) {
      continue;  // happened to be homogeneous
    }
    auto p = PlanRing(in);
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_EQ(p->ring_case, "bi-het");
    ASSERT_TRUE(p->light.has_value());
    CheckSchedule(in, *p, "bi-het trial " + std::to_string(trial));
    // Any integer schedule with circulation x takes at least PortTime(x): the least over every x
    // is a bound no schedule beats, and the rational LP optimum is below it.
    double best = 1e300;
    for (int64_t x = -60; x <= 60; ++x) best = std::min(best, PortTime(in, NetFlows(in.delta, x)));
    ASSERT_LE(p->lower_bound, best + 1e-9) << "trial " << trial;
    ASSERT_GE(p->time, best - 1e-9) << "trial " << trial;
    if (*p->light) {
      ++light_cases;
      // Under the light hypothesis the rounded System 2 solution reaches it.
      ASSERT_NEAR(p->time, best, 1e-9) << "trial " << trial;
      ASSERT_TRUE(p->optimal);
    } else {
      ASSERT_EQ(p->optimal, std::abs(p->time - p->lower_bound) < 1e-9);
    }
  }
  EXPECT_GT(light_cases, 50);
}

TEST(RingSimulatorTest, ChainWalkEqualsTheEventReplay) {
  std::mt19937 rng(31);
  int walked = 0;
  for (int trial = 0; trial < 500; ++trial) {
    const int n = 2 + trial % 9;
    std::vector<int64_t> loads(n);
    std::vector<double> c(n);
    std::vector<std::vector<RingOp>> ops(n);
    for (int i = 0; i < n; ++i) {
      loads[i] = 1 + static_cast<int64_t>(rng() % 4);
      c[i] = 0.5 + (rng() % 6) * 0.25;
      const int k = static_cast<int>(rng() % 3);
      for (int j = 0; j < k; ++j)
        ops[i].push_back({true, static_cast<int64_t>(rng() % 5), (rng() % 4) * 0.5});
    }
    if (trial % 3 == 0) ops[rng() % n].clear();  // make sure a chain start exists often
    const auto fast = SimulateRing(loads, c, c, false, ops);
    const auto slow = SimulateRingEvents(loads, c, c, false, ops, false);
    ASSERT_EQ(fast.complete, slow.complete) << "trial " << trial;
    if (!slow.complete) continue;
    ASSERT_NEAR(fast.makespan, slow.makespan, 1e-9) << "trial " << trial;
    ASSERT_EQ(fast.final_loads, slow.final_loads) << "trial " << trial;
    ASSERT_EQ(fast.transfers.size(), slow.transfers.size()) << "trial " << trial;
    for (size_t t = 0; t < fast.transfers.size(); ++t) {
      ASSERT_EQ(fast.transfers[t].from, slow.transfers[t].from) << "trial " << trial;
      ASSERT_EQ(fast.transfers[t].items, slow.transfers[t].items) << "trial " << trial;
      ASSERT_NEAR(fast.transfers[t].start, slow.transfers[t].start, 1e-9) << "trial " << trial;
    }
    ++walked;
  }
  EXPECT_GT(
      walked,
      100);  // the rest are plans that need items nobody holds: both replays agree on that too
}

TEST(RingSimulatorTest, BatchedBidirectionalReplayEqualsItemByItem) {
  std::mt19937 rng(37);
  int complete = 0;
  for (int trial = 0; trial < 500; ++trial) {
    const int n = 2 + trial % 9;
    std::vector<int64_t> loads(n);
    std::vector<double> cn(n), cp(n);
    std::vector<std::vector<RingOp>> ops(n);
    for (int i = 0; i < n; ++i) {
      loads[i] = 1 + static_cast<int64_t>(rng() % 5);
      cn[i] = 0.5 + (rng() % 6) * 0.25;
      cp[i] = 0.5 + (rng() % 6) * 0.25;
      const int k = static_cast<int>(rng() % 3);
      for (int j = 0; j < k; ++j)
        ops[i].push_back({rng() % 2 == 0, static_cast<int64_t>(rng() % 4), (rng() % 3) * 0.5});
    }
    const auto fast = SimulateRingEvents(loads, cn, cp, true, ops, true);
    const auto slow = SimulateRingEvents(loads, cn, cp, true, ops, false);
    ASSERT_EQ(fast.complete, slow.complete) << "trial " << trial;
    if (!slow.complete) continue;
    ++complete;
    ASSERT_NEAR(fast.makespan, slow.makespan, 1e-9) << "trial " << trial;
    ASSERT_EQ(fast.final_loads, slow.final_loads) << "trial " << trial;
    ASSERT_EQ(fast.transfers.size(), slow.transfers.size()) << "trial " << trial;
    for (size_t t = 0; t < fast.transfers.size(); ++t) {
      ASSERT_EQ(fast.transfers[t].from, slow.transfers[t].from) << "trial " << trial;
      ASSERT_EQ(fast.transfers[t].to, slow.transfers[t].to) << "trial " << trial;
      ASSERT_EQ(fast.transfers[t].items, slow.transfers[t].items) << "trial " << trial;
      ASSERT_NEAR(fast.transfers[t].start, slow.transfers[t].start, 1e-9) << "trial " << trial;
    }
  }
  EXPECT_GT(complete, 100);
}

TEST(RingSimulatorTest, AProcessorForwardsOnlyWhatItHolds) {
  // P1 holds 1 item but must forward 3 from P0: it waits for each to arrive.
  RingInput in{false, {5, 1, 1}, {3, 0, -3}, {1, 1, 1}, {}};
  std::vector<std::vector<RingOp>> ops = {{{true, 3, 0}}, {{true, 3, 0}}, {}};
  auto s = SimulateRing(in.loads, in.c_next, in.c_next, false, ops);
  ASSERT_TRUE(s.complete);
  EXPECT_EQ(s.final_loads, (std::vector<int64_t>{2, 1, 4}));
  EXPECT_DOUBLE_EQ(s.makespan, 3);  // pipelined: P1 sends its own item first, then forwards
  // Nothing to forward and nothing held: the plan cannot finish.
  std::vector<std::vector<RingOp>> stuck = {{}, {{true, 2, 0}}, {}};
  EXPECT_FALSE(SimulateRing(in.loads, in.c_next, in.c_next, false, stuck).complete);
}

}  // namespace
}  // namespace aiac::redistribution
