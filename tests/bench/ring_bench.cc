// Ring redistribution on n = 1,000 processors, all four cases (issue target: each under 50 ms,
// replay by the simulator included). The baseline measured in the same run is the simulator
// alone replaying the returned plan, so the ratio shows what planning adds to a replay.
// Run: build/bin/ring_bench [n max_imbalance]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "redistribution/ring.h"

using namespace aiac::redistribution;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 1000;
  const int spread = argc > 2 ? std::atoi(argv[2]) : 50;
  std::mt19937 rng(11);
  RingInput base;
  int64_t sum = 0;
  for (int i = 0; i < n; ++i) {
    base.delta.push_back(static_cast<int64_t>(rng() % (2 * spread + 1)) - spread);
    sum += base.delta.back();
  }
  base.delta[0] -= sum;
  for (int i = 0; i < n; ++i)
    base.loads.push_back(std::max<int64_t>(1, base.delta[i] + 1) +
                         static_cast<int64_t>(rng() % 100));
  std::printf("ring of %d processors, |delta| <= %d (+ balancing), times best of 3\n", n, spread);
  for (const char* name : {"uni-hom", "uni-het", "bi-hom", "bi-het"}) {
    RingInput in = base;
    in.bidirectional = name[0] == 'b';
    const bool het = std::string(name).find("het") != std::string::npos;
    for (int i = 0; i < n; ++i) {
      in.c_next.push_back(het ? 0.5 + (rng() % 8) * 0.25 : 1.0);
      if (in.bidirectional) in.c_prev.push_back(het ? 0.5 + (rng() % 8) * 0.25 : 1.0);
    }
    double plan_s = 1e300;
    RingPlan plan;
    for (int r = 0; r < 3; ++r) {
      const auto t0 = Clock::now();
      auto p = PlanRing(in);
      plan_s = std::min(plan_s, std::chrono::duration<double>(Clock::now() - t0).count());
      if (!p.ok()) {
        std::printf("%s: %s\n", name, p.status().message().c_str());
        return 1;
      }
      plan = std::move(*p);
    }
    // Replaying the plan's transfers alone, as a baseline of the same run.
    std::vector<std::vector<RingOp>> ops(n);
    for (const auto& t : plan.transfers)
      ops[t.from].push_back({t.to == (t.from + 1) % n, t.items, t.start});
    const auto t0 = Clock::now();
    auto replay = SimulateRing(in.loads, in.c_next, in.bidirectional ? in.c_prev : in.c_next,
                               in.bidirectional, ops);
    const double replay_s = std::chrono::duration<double>(Clock::now() - t0).count();
    std::printf(
        "%-8s plan %8.2f ms (replay alone %6.2f ms, ratio %.1fx)  time %.2f  bound %.2f  optimal "
        "%s%s  [%s]\n",
        plan.ring_case.c_str(), plan_s * 1e3, replay_s * 1e3, plan_s / replay_s, plan.time,
        plan.lower_bound, plan.optimal ? "yes" : "no",
        plan.light ? (*plan.light ? "  light" : "  not light") : "",
        plan_s < 0.05 ? "under 50 ms" : "over 50 ms");
    (void)replay;
  }
  return 0;
}
