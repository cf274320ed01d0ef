// DistPM against greedy, executed for real (docs/balancing.md): the synthetic job on the emulated
// conf/platforms/teragrid-small.toml (four sites of two nodes, two of them overloaded by
// background jobs), live balancing on (--balance dp), its items moving daemon to daemon across
// the emulated inter-site links through each site's gateways, the channels' amounts planned by
// DistPM's LP (--migration distpm) or greedily (--migration greedy). Each item carries
// `item_bytes` of data, so that a move costs what the links make it cost. In turns (each turn
// starts with the other planner): the seconds moving (first export to last import of each
// redistribution, summed), the wall time, the items moved between sites, and the ratio of
// DistPM's to greedy's within a turn, median over the turns. Checks that every run ends with the
// workload's checksum. Prints; never fails on a time.
// Run: build/bin/migration_bench [turns [items item_bytes iterations]]
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench_support.h"
#include "spawner/child_process.h"

using namespace aiac;

namespace {

nlohmann::json Run(const std::string& dir, const std::string& name, const std::string& job,
                   const std::string& planner) {
  const std::string json = dir + "/" + name + ".json";
  std::vector<std::string> argv{
      spawner::SelfDirectory() + "/aiac-spawner",
      "run",
      job,
      "--platform",
      std::string(AIAC_SOURCE_DIR) + "/conf/platforms/teragrid-small.toml",
      "--local",
      "--split",
      "equal",
      "--balance",
      "dp",
      "--migration",
      planner,
      "--json",
      json};
  auto child = spawner::ChildProcess::Spawn(argv, dir + "/" + name + ".log");
  if (!child.ok()) {
    std::printf("run %s: %s\n", name.c_str(), child.status().message().c_str());
    return nullptr;
  }
  if (child->WaitFor(std::chrono::minutes(10)).value_or(-1) != 0) {
    std::printf("run %s failed: see %s/%s.log\n", name.c_str(), dir.c_str(), name.c_str());
    return nullptr;
  }
  std::ifstream in(json);
  return nlohmann::json::parse(in);
}

}  // namespace

int main(int argc, char** argv) {
  const int turns = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  const int items = argc > 2 ? std::atoi(argv[2]) : 4000;
  const int item_bytes = argc > 3 ? std::atoi(argv[3]) : 16384;
  const int iterations = argc > 4 ? std::atoi(argv[4]) : 100;
  const std::string dir = std::filesystem::temp_directory_path().string() +
                          "/aiac-migration-bench-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  const std::string job = dir + "/syn.toml";
  std::ofstream(job)
      << "name = \"migration-bench\"\napp = \"synthetic\"\ntasks = 8\ntimeout_s = 300\n"
      << "checkpoint_seconds = 5\n[params]\nitems = " << items << "\niterations = " << iterations
      << "\nbase_cost = 2000\nseed = 5\nitem_bytes = " << item_bytes << "\n";
  const std::vector<std::string> planners = {"distpm", "greedy"};
  std::vector<std::vector<double>> moving(2), wall(2), across(2), moving_ratio(1), wall_ratio(1);
  double checksum = -1;
  bool ok = true;
  for (int t = 0; t < turns; ++t) {
    double m[2] = {-1, -1}, w[2] = {-1, -1};
    for (int k = 0; k < 2; ++k) {
      const int p = (k + t) % 2;
      auto j = Run(dir, planners[p] + "-" + std::to_string(t), job, planners[p]);
      if (j.is_null()) {
        ok = false;
        continue;
      }
      const double c = j["result"]["checksum"].get<double>();
      if (j["status"] != "converged" || (checksum >= 0 && c != checksum)) {
        std::printf("WRONG: a %s run ended %s with checksum %.0f\n", planners[p].c_str(),
                    j["status"].get<std::string>().c_str(), c);
        ok = false;
      }
      checksum = c;
      const auto& b = j["balancing"];
      m[p] = b["seconds_moving"].get<double>();
      w[p] = j["wall_seconds"].get<double>();
      moving[p].push_back(m[p]);
      wall[p].push_back(w[p]);
      across[p].push_back(b["items_between_clusters"].get<double>());
      std::printf(
          "turn %d: --migration %s: %.2f s, %.3f s moving, %.0f items between sites in %d "
          "redistributions\n",
          t + 1, planners[p].c_str(), w[p], m[p], b["items_between_clusters"].get<double>(),
          b["redistributions"].get<int>());
      std::fflush(stdout);
    }
    moving_ratio[0].push_back(m[0] > 0 && m[1] > 0 ? m[0] / m[1] : -1);
    wall_ratio[0].push_back(w[0] > 0 && w[1] > 0 ? w[0] / w[1] : -1);
  }
  std::printf(
      "\nsynthetic, %d items of %d bytes x %d steps, 8 tasks on teragrid-small (emulated); %d "
      "turns\n",
      items, item_bytes, iterations, turns);
  std::printf("%-12s %10s %12s %16s\n", "--migration", "wall (s)", "moving (s)", "items across");
  for (int p = 0; p < 2; ++p) {
    std::printf("%-12s %10.2f %12.3f %16.0f\n", planners[p].c_str(), bench::Median(wall[p]),
                bench::Median(moving[p]), bench::Median(across[p]));
  }
  std::printf("distpm vs greedy: moving %.2fx, wall %.2fx\n", bench::Median(moving_ratio[0]),
              bench::Median(wall_ratio[0]));
  if (!ok) {
    std::printf("runs failed or ended wrong: their logs are in %s\n", dir.c_str());
    return 1;
  }
  std::filesystem::remove_all(dir);
  return 0;
}
