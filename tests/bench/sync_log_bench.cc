// The cost of sender-side value logging in synchronous runs (daemon/value_log.h): a CG job with
// `--sync`, its tasks keeping what they send for a replacement (value_log_mb = 256, the default)
// and keeping nothing (value_log_mb = 0: a lost daemon ends the run), interleaved, in the same
// run, without faults. Prints the medians and the ratios logging / not logging of the iteration
// rate (goal: at most 5 % slower, a rate >= 0.95x) and of the time to the solution (which also
// moves with the iteration the convergence detection stops at). Never fails on a time.
// The default job is examples/cg-faults.toml (8 s of iterations on this 2-core VM): the main
// job iterates for 0.4 s, less than the noise between two of its runs.
// Run: build/bin/sync_log_bench [JOB daemons repetitions]
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bench/bench_support.h"
#include "bench/spawner_run.h"
#include "core/temp_dir.h"

using namespace aiac;

namespace {

struct Figures {
  double rate = -1;     // iterations per second of the iterate phase, all tasks together
  double iterate = -1;  // seconds of the iterate phase: the time to the solution
};

Figures Run(const std::string& dir, const std::string& job_text, int daemons, int log_mb,
            int repetition) {
  const std::string tag = "log" + std::to_string(log_mb) + "-" + std::to_string(repetition);
  const std::string job = dir + "/" + tag + ".toml";
  // Top-level keys come before the job's first table.
  std::ofstream(job) << "value_log_mb = " << log_mb << "\n" << job_text;
  // Live balancing moves items at moments that differ run to run.
  const auto summary = bench::ConvergedRun(
      dir, tag, {"--local", std::to_string(daemons), job, "--sync", "--balance", "off"});
  Figures f;
  if (summary.is_null()) return f;
  f.rate = bench::IterationRate(summary);
  f.iterate = summary["phases"]["iterate"].get<double>();
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string job =
      argc > 1 ? argv[1] : std::string(AIAC_SOURCE_DIR) + "/examples/cg-faults.toml";
  const int daemons = argc > 2 ? std::atoi(argv[2]) : 4;
  const int repetitions = argc > 3 ? std::atoi(argv[3]) : 5;
  std::ifstream in(job);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", job.c_str());
    return 1;
  }
  std::stringstream text;
  text << in.rdbuf();
  auto dir = MakeTempDir("aiac-sync-log-bench");
  if (!dir.ok()) {
    std::fprintf(stderr, "%s\n", dir.status().message().c_str());
    return 1;
  }
  const int log_mb[2] = {0, 256};
  std::vector<double> rate[2], iterate[2];
  for (int r = 0; r < repetitions; ++r) {
    for (int k = 0; k < 2; ++k) {
      // Alternate which goes first, so a drift of the machine's load hits both alike.
      const int kind = (r % 2 == 0) ? k : 1 - k;
      const Figures f = Run(*dir, text.str(), daemons, log_mb[kind], r);
      rate[kind].push_back(f.rate);
      iterate[kind].push_back(f.iterate);
      std::printf("run %d value_log_mb %3d: %8.1f iterations/s, iterating %.3f s\n", r + 1,
                  log_mb[kind], f.rate, f.iterate);
    }
  }
  const double r0 = bench::Median(rate[0]), r1 = bench::Median(rate[1]);
  const double i0 = bench::Median(iterate[0]), i1 = bench::Median(iterate[1]);
  std::printf("\n%s --sync on %d local daemons, medians of %d runs each:\n", job.c_str(), daemons,
              repetitions);
  std::printf("  keeping nothing (value_log_mb = 0): %8.1f iterations/s, iterating %.3f s\n", r0,
              i0);
  std::printf("  logging (value_log_mb = 256):       %8.1f iterations/s, iterating %.3f s\n", r1,
              i1);
  if (r0 > 0 && r1 > 0 && i0 > 0 && i1 > 0) {
    std::printf(
        "  ratio logging / not: iteration rate %.3fx (goal >= 0.95), time to the solution "
        "%.3fx (goal <= 1.05)\n",
        r1 / r0, i1 / i0);
  }
  std::error_code ec;
  std::filesystem::remove_all(*dir, ec);
  return 0;
}
