// Asynchronous against synchronous iterations (docs/results.md): the CG job on the emulated
// MAHEVE hd 0.50 platform (conf/platforms/maheve-hd050.toml: four clusters on three sites, links
// of 5-20 ms between sites), run asynchronously and with --sync, several seeds. Writes
// DIR/async_sync.json ({"rows": [{"platform", "mode", "seeds", "seconds", "iterations_min",
// "iterations_max", "vs_async"}]}) and DIR/async_sync.png.
//
//   build/bin/async_sync_eval --out DIR [--seed S] [--quick]
//
// Times are the application's (compute_seconds: from the tasks' start to the checked result,
// without starting the local platform) and emulated (every iteration stretched by its node's
// power and the slowdown, every message by its link), so the two modes compare. As in
// maheve_eval: blocks of equal rows, no live balancing (either would change the work of a
// mode's tasks as it runs), the daemons started in an order drawn from the seed, and a slowdown
// of 500 so that emulated times, not the cost of 110 daemons on this host, set the pace (with
// the defaults an iteration's 20-30 ms were the host's).
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "eval/eval_support.h"

int main(int argc, char** argv) {
  const auto args = aiac::eval::ParseEvalArgs(argc, argv, "async_sync_eval");
  const int seeds = args.quick ? 1 : 3;
  const int n = args.quick ? 100000 : 200000, tasks = 64;
  const std::string platform = std::string(AIAC_SOURCE_DIR) + "/conf/platforms/maheve-hd050.toml";
  const std::string work = args.out + "/async_sync-runs";
  std::filesystem::create_directories(work);
  const std::string job = work + "/cg.toml";
  std::ofstream(job) << "name = \"async-sync-eval\"\napp = \"cg\"\ntasks = " << tasks
                     << "\ntimeout_s = 1200\n[params]\nn = " << n
                     << "\nbandwidth = 8\ntolerance = 1e-9\n";
  std::printf("async vs sync: CG n = %d on %d tasks of the hd 0.50 platform, %d seed(s)\n", n,
              tasks, seeds);
  nlohmann::json rows = nlohmann::json::array();
  std::ostringstream dat;
  double async_seconds = NAN;
  for (const char* mode : {"async", "sync"}) {
    double sum = 0;
    int ok = 0;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int s = 0; s < seeds; ++s) {
      const std::string seed = std::to_string(args.seed + static_cast<uint64_t>(s));
      std::vector<std::string> run{
          job,     "--platform", platform, "--local",         "--split",
          "equal", "--balance",  "off",    "--shuffle-nodes", "--platform-seed",
          seed,    "--slowdown", "500"};
      const std::string tag = std::string(mode) + "-" + seed;
      if (std::string(mode) == "sync") run.push_back("--sync");
      auto summary =
          aiac::eval::RunSpawner(run, work + "/" + tag + ".json", work + "/" + tag + ".log");
      if (summary.value("status", "") != "converged") {
        std::printf("  %s: %s (%s)\n", tag.c_str(), summary.value("status", "?").c_str(),
                    summary.value("error", "").c_str());
        continue;
      }
      sum += summary["compute_seconds"].get<double>();
      lo = std::min(lo, summary["iterations"]["min"].get<uint64_t>());
      hi = std::max(hi, summary["iterations"]["max"].get<uint64_t>());
      ++ok;
    }
    const double seconds = ok > 0 ? sum / ok : NAN;
    if (std::string(mode) == "async") async_seconds = seconds;
    rows.push_back({{"platform", "hd050"},
                    {"mode", mode},
                    {"seeds", ok},
                    {"seconds", aiac::eval::NumberOrNull(seconds)},
                    {"iterations_min", ok > 0 ? nlohmann::json(lo) : nlohmann::json(nullptr)},
                    {"iterations_max", ok > 0 ? nlohmann::json(hi) : nlohmann::json(nullptr)},
                    {"vs_async", aiac::eval::NumberOrNull(seconds / async_seconds)}});
    dat << mode << " " << (std::isnan(seconds) ? 0 : seconds) << "\n";
    std::printf("%-6s %8.2f s (x%.2f of async), iterations %llu..%llu, %d run(s)\n", mode, seconds,
                seconds / async_seconds, static_cast<unsigned long long>(ok > 0 ? lo : 0),
                static_cast<unsigned long long>(hi), ok);
  }
  aiac::eval::WriteTable(args.out, "async_sync", rows);
  aiac::eval::Plot(
      args.out, "async_sync", dat.str(),
      "set title 'CG on the emulated hd 0.50 platform (emulated seconds, lower is better)'\n"
      "set style data histograms\nset style fill solid 0.8 border -1\nset boxwidth 0.6\n"
      "set ylabel 'seconds'\nset yrange [0:*]\nunset key\n"
      "plot datafile using 2:xtic(1)\n");
  std::printf("table: %s/async_sync.json, plot: %s/async_sync.png, runs: %s\n", args.out.c_str(),
              args.out.c_str(), work.c_str());
  return 0;
}
