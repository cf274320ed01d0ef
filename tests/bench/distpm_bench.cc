// DistPM with 64 groups (issue target: under 50 ms), against the greedy baseline measured in
// the same run: time and makespan ratios. Run: build/bin/distpm_bench [groups]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "redistribution/distpm.h"

using namespace aiac::redistribution;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 64;
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> unit(0, 1);
  MigrationInput in;
  std::vector<int> loads(n);
  int total = 0;
  for (int g = 0; g < n; ++g) total += loads[g] = 500 + static_cast<int>(rng() % 1000);
  const int per = total / n;
  for (int g = 0; g < n; ++g)
    in.groups.push_back({"g" + std::to_string(g), double(loads[g]),
                         double(g + 1 == n ? total - per * (n - 1) : per)});
  in.alpha.assign(n, std::vector<double>(n));
  in.beta.assign(n, std::vector<double>(n));
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      in.alpha[a][b] = 0.001 + 0.05 * unit(rng);
      in.beta[a][b] = 1e-5 * (1 + 20 * unit(rng));
    }
  const int reps = 5;
  double lp_time = 1e300, greedy_time = 1e300;
  MigrationPlans plans;
  MigrationPlan greedy;
  for (int r = 0; r < reps; ++r) {
    auto t0 = Clock::now();
    plans = *PlanMigration(in);
    lp_time = std::min(lp_time, std::chrono::duration<double>(Clock::now() - t0).count());
    t0 = Clock::now();
    greedy = GreedyMigration(in);
    greedy_time = std::min(greedy_time, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::printf("%d groups (%zu overloaded x %zu underloaded channels), best of %d\n", n,
              plans.overloaded.size(), plans.underloaded.size(), reps);
  std::printf("distpm  %8.2f ms  makespan %.4f s (LP objective %.4f s)\n", lp_time * 1e3,
              plans.distpm.makespan, plans.distpm.lp_objective);
  std::printf("greedy  %8.2f ms  makespan %.4f s\n", greedy_time * 1e3, greedy.makespan);
  std::printf(
      "makespan greedy / distpm: %.2fx; planning time distpm / greedy: %.0fx; target: distpm under "
      "50 ms (%s)\n",
      greedy.makespan / plans.distpm.makespan, lp_time / greedy_time,
      lp_time < 0.05 ? "met" : "missed");
  return 0;
}
