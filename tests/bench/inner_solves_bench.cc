// Exact block solves against two-stage ones (docs/user-guide.md, "Inner solves") on a 3-D
// Poisson problem: `run --local TASKS` of the CG app with inner = "direct" (every block
// factored) and inner = "auto" (a block whose factor would fill more than 8x is iterated,
// two-stage, with the multigrid cycle and the coarse pieces chosen for it), partition "auto"
// (slices of a cube: they cut under 2 %) and "metis", interleaved, in the same run. Prints every
// run and the medians' ratios auto / direct (whole run, set-up, iterate phase). Never fails on a
// time; exits 1 when a run does not converge. Run: build/bin/inner_solves_bench [K [TASKS
// [REPETITIONS]]]   (a K^3 grid; 80 5 2 by default)
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "apps/cg/cg_problem.h"
#include "apps/cg/matrix_market.h"
#include "bench/bench_support.h"
#include "bench/spawner_run.h"
#include "core/temp_dir.h"

using namespace aiac;

namespace {

struct Setting {
  const char* inner;
  const char* partition;
};

struct Figures {
  double wall = -1, setup = -1, iterate = -1, iterations = -1;
};

Figures Run(const std::string& dir, const std::string& matrix, int tasks, const Setting& s,
            int repetition) {
  const std::string tag = std::string(s.inner) + "-" + s.partition + std::to_string(repetition);
  const std::string job = dir + "/" + tag + ".toml";
  std::ofstream(job) << "name = \"" << tag << "\"\napp = \"cg\"\ntasks = " << tasks
                     << "\ntimeout_s = 600\n\n[params]\nmatrix = \"" << matrix << "\"\ninner = \""
                     << s.inner << "\"\npartition = \"" << s.partition
                     << "\"\nresidual_tolerance = 1e-8\n";
  const auto summary = bench::ConvergedRun(dir, tag, {"--local", std::to_string(tasks), job});
  Figures f;
  if (summary.is_null()) return f;
  f.wall = summary["wall_seconds"].get<double>();
  f.setup = summary["setup_seconds"].get<double>();
  f.iterate = summary["phases"]["iterate"].get<double>();
  f.iterations = summary["iterations"]["max"].get<double>();
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  const int k = argc > 1 ? std::atoi(argv[1]) : 80;
  const int tasks = argc > 2 ? std::atoi(argv[2]) : 5;
  const int repetitions = argc > 3 ? std::atoi(argv[3]) : 2;
  if (k < 8 || tasks < 2 || repetitions < 1) {
    std::fprintf(stderr, "usage: inner_solves_bench [K >= 8 [TASKS >= 2 [REPETITIONS >= 1]]]\n");
    return 2;
  }
  auto dir = MakeTempDir("aiac-inner-solves-bench");
  if (!dir.ok()) {
    std::fprintf(stderr, "%s\n", dir.status().message().c_str());
    return 1;
  }
  const std::string matrix = *dir + "/poisson3d.mtx";
  if (Status written = cg::WriteMatrixMarketMatrix(matrix, cg::GridLaplacian3d(k), true);
      !written.ok()) {
    std::fprintf(stderr, "%s\n", written.message().c_str());
    return 1;
  }
  const Setting settings[] = {
      {"direct", "auto"}, {"auto", "auto"}, {"direct", "metis"}, {"auto", "metis"}};
  constexpr int kSettings = 4;
  std::vector<Figures> runs[kSettings];
  int failures = 0;
  for (int r = 0; r < repetitions; ++r) {
    for (int i = 0; i < kSettings; ++i) {
      // Every other repetition backwards, so a drift of the machine's load hits all alike.
      const int s = r % 2 == 0 ? i : kSettings - 1 - i;
      const Figures f = Run(*dir, matrix, tasks, settings[s], r);
      if (f.wall < 0) ++failures;
      runs[s].push_back(f);
      std::printf(
          "run %d inner %-6s partition %-10s: %6.2f s (set-up %5.2f, iterate %5.2f), "
          "%4.0f outer iterations\n",
          r + 1, settings[s].inner, settings[s].partition, f.wall, f.setup, f.iterate,
          f.iterations);
      std::fflush(stdout);
    }
  }
  auto median = [&](int s, double Figures::*field) {
    std::vector<double> v;
    for (const Figures& f : runs[s]) v.push_back(f.*field);
    return bench::Median(v);
  };
  std::printf("\n3-D Poisson %d^3 (%d rows), %d tasks on local daemons, medians of %d runs:\n", k,
              k * k * k, tasks, repetitions);
  for (int s = 0; s < kSettings; ++s) {
    std::printf("  inner %-6s partition %-10s: %6.2f s (set-up %5.2f, iterate %5.2f)\n",
                settings[s].inner, settings[s].partition, median(s, &Figures::wall),
                median(s, &Figures::setup), median(s, &Figures::iterate));
  }
  for (int s : {1, 3}) {
    const int base = s - 1;
    std::printf(
        "  ratio auto / direct, partition %s: whole run %.2fx, set-up %.2fx, iterate %.2fx\n",
        settings[s].partition, median(s, &Figures::wall) / median(base, &Figures::wall),
        median(s, &Figures::setup) / median(base, &Figures::setup),
        median(s, &Figures::iterate) / median(base, &Figures::iterate));
  }
  std::error_code ec;
  std::filesystem::remove_all(*dir, ec);
  return failures == 0 ? 0 : 1;
}
