// The cost of running each task's app in a child process (daemon/app_child.h) against running it
// in the daemon, on the main job: `run --local N` with local_app_isolation = "process" and
// "thread", interleaved, in the same run. Prints the medians and their ratios (process / thread):
// the iteration rate (iterations of all tasks over the iterate phase; goal >= 0.95), the set-up
// time (daemons granted to every task ready; goal <= 1.2), and, to read the first by, the time to
// the solution (the iterate phase) and the iterations it took. Never fails on a time.
// Run: build/bin/isolation_bench [JOB daemons repetitions]
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bench/bench_support.h"
#include "bench/spawner_run.h"
#include "core/temp_dir.h"

using namespace aiac;

namespace {

struct Figures {
  double rate = -1;        // iterations per second of the iterate phase, all tasks together
  double setup = -1;       // seconds
  double iterate = -1;     // seconds of the iterate phase: the time to the solution
  double iterations = -1;  // of all tasks, to the solution
};

Figures Run(const std::string& dir, const std::string& job, int daemons,
            const std::string& isolation, int repetition) {
  const std::string tag = isolation + std::to_string(repetition);
  const std::string config = dir + "/" + tag + ".toml";
  std::ofstream(config) << "local_app_isolation = \"" << isolation << "\"\n";
  const auto summary =
      bench::ConvergedRun(dir, tag, {"--config", config, "--local", std::to_string(daemons), job});
  Figures f;
  if (summary.is_null()) return f;
  f.rate = bench::IterationRate(summary);
  f.iterate = summary["phases"]["iterate"].get<double>();
  f.iterations = f.rate * f.iterate;
  f.setup = summary["setup_seconds"].get<double>();
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string job = argc > 1 ? argv[1] : std::string(AIAC_SOURCE_DIR) + "/apps/cg/cg.toml";
  const int daemons = argc > 2 ? std::atoi(argv[2]) : 8;
  const int repetitions = argc > 3 ? std::atoi(argv[3]) : 5;
  auto dir = MakeTempDir("aiac-isolation-bench");
  if (!dir.ok()) {
    std::fprintf(stderr, "%s\n", dir.status().message().c_str());
    return 1;
  }
  std::vector<double> rate[2], setup[2], iterate[2], iterations[2];
  const char* kinds[2] = {"thread", "process"};
  for (int r = 0; r < repetitions; ++r) {
    for (int k = 0; k < 2; ++k) {
      // Alternate which goes first, so a drift of the machine's load hits both alike.
      const int kind = (r % 2 == 0) ? k : 1 - k;
      const Figures f = Run(*dir, job, daemons, kinds[kind], r);
      rate[kind].push_back(f.rate);
      setup[kind].push_back(f.setup);
      iterate[kind].push_back(f.iterate);
      iterations[kind].push_back(f.iterations);
      std::printf("run %d %-7s: %8.0f iterations/s, set-up %.3f s, iterating %.3f s\n", r + 1,
                  kinds[kind], f.rate, f.setup, f.iterate);
    }
  }
  const double rt = bench::Median(rate[0]), rp = bench::Median(rate[1]);
  const double st = bench::Median(setup[0]), sp = bench::Median(setup[1]);
  const double it = bench::Median(iterate[0]), ip = bench::Median(iterate[1]);
  const double nt = bench::Median(iterations[0]), np = bench::Median(iterations[1]);
  std::printf("\n%s on %d local daemons, medians of %d runs each:\n", job.c_str(), daemons,
              repetitions);
  std::printf(
      "  apps in the daemon (thread):   %8.0f iterations/s, set-up %.3f s, iterating %.3f s\n", rt,
      st, it);
  std::printf(
      "  apps in child processes:       %8.0f iterations/s, set-up %.3f s, iterating %.3f s\n", rp,
      sp, ip);
  if (rt > 0 && rp > 0 && st > 0 && sp > 0 && it > 0 && ip > 0 && nt > 0 && np > 0) {
    std::printf(
        "  ratio process / thread: iteration rate %.3fx (goal >= 0.95), set-up %.3fx "
        "(goal <= 1.2), time to the solution %.3fx, iterations to it %.3fx\n",
        rp / rt, sp / st, ip / it, np / nt);
  }
  std::error_code ec;
  std::filesystem::remove_all(*dir, ec);
  return 0;
}
