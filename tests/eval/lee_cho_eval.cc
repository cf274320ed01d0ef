// Lee & Cho's schemes on emulated time-shared nodes (docs/results.md; the paper's section 5):
// the synthetic job (4 tasks, 20,000 items; 40,000 in the full run) on the two leecho platforms
// (conf/platforms/leecho-*.toml: equal means but unequal burstiness, and one node loaded three
// times as much). Static schemes, the split fixed before the run: S_E equal (`--split equal`),
// S_M and S_P from the nodes' powers and background loads as the platform file gives them
// (`--split sm|sp`); dynamic schemes D_M and D_P (`--balance dm|dp`, from the equal split)
// moving items while the job runs. Several seeds of the nodes' background draws. Writes
// DIR/lee_cho.json ({"rows": [{"platform", "scheme", "seeds", "seconds", "vs_off",
// "redistributions", "items_moved"}]}, vs_off against S_E) and DIR/lee_cho.png.
//
//   build/bin/lee_cho_eval --out DIR [--seed S] [--quick]
//
// Times are the application's (compute_seconds) and emulated: every iteration is stretched by
// its node's background load, redrawn every 2 s.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "eval/eval_support.h"

int main(int argc, char** argv) {
  const auto args = aiac::eval::ParseEvalArgs(argc, argv, "lee_cho_eval");
  const int seeds = args.quick ? 1 : 3;
  const int items = args.quick ? 20000 : 40000;
  const std::string work = args.out + "/lee_cho-runs";
  std::filesystem::create_directories(work);
  const std::string job = work + "/synthetic.toml";
  std::ofstream(job) << "name = \"lee-cho-eval\"\napp = \"synthetic\"\ntasks = 4\ntimeout_s = "
                        "1200\n[params]\nitems = "
                     << items << "\niterations = 60\nbase_cost = 400\nseed = 5\n";
  std::printf(
      "Lee & Cho: synthetic, %d items on 4 tasks, 2 platforms x S_E / S_M / S_P / D_M / D_P, %d "
      "seed(s)\n",
      items, seeds);
  struct Scheme {
    const char* name;
    const char* balance;
    const char* split;
  };
  const Scheme schemes[] = {{"S_E", "off", "equal"},
                            {"S_M", "off", "sm"},
                            {"S_P", "off", "sp"},
                            {"D_M", "dm", "equal"},
                            {"D_P", "dp", "equal"}};
  nlohmann::json rows = nlohmann::json::array();
  std::ostringstream dat;
  for (const char* platform : {"leecho-burst", "leecho-loaded"}) {
    const std::string file = std::string(AIAC_SOURCE_DIR) + "/conf/platforms/" + platform + ".toml";
    std::map<std::string, double> seconds;
    std::string line = platform;
    for (const Scheme& sc : schemes) {
      const char* scheme = sc.name;
      double sum = 0, redistributions = 0, moved = 0;
      int ok = 0;
      for (int s = 0; s < seeds; ++s) {
        const uint64_t seed = args.seed + static_cast<uint64_t>(s);
        const std::string tag = std::string(platform) + "-" + scheme + "-" + std::to_string(seed);
        auto summary =
            aiac::eval::RunSpawner({job, "--platform", file, "--local", "--balance", sc.balance,
                                    "--split", sc.split, "--platform-seed", std::to_string(seed)},
                                   work + "/" + tag + ".json", work + "/" + tag + ".log");
        if (summary.value("status", "") != "converged") {
          std::printf("  %s: %s (%s)\n", tag.c_str(), summary.value("status", "?").c_str(),
                      summary.value("error", "").c_str());
          continue;
        }
        sum += summary["compute_seconds"].get<double>();
        redistributions += summary["balancing"]["redistributions"].get<double>();
        moved += summary["balancing"]["items_moved"].get<double>();
        ++ok;
      }
      const double mean = ok > 0 ? sum / ok : NAN;
      seconds[scheme] = mean;
      const double vs_off = mean / seconds["S_E"];
      rows.push_back({{"platform", platform},
                      {"scheme", scheme},
                      {"seeds", ok},
                      {"seconds", aiac::eval::NumberOrNull(mean)},
                      {"vs_off", aiac::eval::NumberOrNull(vs_off)},
                      {"redistributions", ok > 0 ? redistributions / ok : 0.0},
                      {"items_moved", ok > 0 ? moved / ok : 0.0}});
      std::printf(
          "%-14s %-4s %8.2f s (x%.2f of S_E), %.1f redistributions, %.0f items moved, %d run(s)\n",
          platform, scheme, mean, vs_off, ok > 0 ? redistributions / ok : 0.0,
          ok > 0 ? moved / ok : 0.0, ok);
      std::fflush(stdout);
      line += ' ';
      line += std::to_string(std::isnan(mean) ? 0.0 : mean);
    }
    dat << line << "\n";
  }
  aiac::eval::WriteTable(args.out, "lee_cho", rows);
  aiac::eval::Plot(
      args.out, "lee_cho", dat.str(),
      "set title 'Synthetic job on emulated time-shared nodes (emulated seconds, lower is "
      "better)'\n"
      "set style data histograms\nset style histogram clustered\nset style fill solid 0.8 border "
      "-1\n"
      "set ylabel 'seconds'\nset yrange [0:*]\nset key top left\n"
      "plot datafile using 2:xtic(1) title 'S_E', '' using 3 title 'S_M', '' using 4 title 'S_P', "
      "'' using 5 title 'D_M', '' using 6 title 'D_P'\n");
  std::printf("table: %s/lee_cho.json, plot: %s/lee_cho.png, runs: %s\n", args.out.c_str(),
              args.out.c_str(), work.c_str());
  return 0;
}
