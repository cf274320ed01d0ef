// What fault tolerance costs, measured in one run on local clusters with the CG job:
// 1. the iteration rate (iterations per task per second of computing) with checkpoints every k
//    iterations, and every second (the default), against no checkpoints at all. Two tasks on two
//    daemons, one core each, in synchronous mode: every run then does exactly the same work
//    (asynchronous runs differ in iterations and inner work from one run to the next, which
//    hides a few per cent), and a checkpoint that delays a task also delays its neighbour, so
//    this bounds the asynchronous overhead from above. Runs are taken in turns, and the ratio
//    is the median of the ratios within each turn, so a slow moment of the machine hits both
//    sides of a ratio alike; a second setup without checkpoints shows how far two identical
//    setups differ on this machine (the noise the other ratios carry);
//    The blocks are solved with inner = "cg" (an inner CG per iteration), as when the numbers in
//    docs/results.md were measured; factored blocks iterate far faster, so checkpoints weigh more.
// 2. the time from a daemon's SIGKILL (--kill-every) to its task iterating again on another
//    daemon, against the time the same run took to set up all its tasks at the start.
// Prints times and ratios; never fails on a time.
// Run: build/bin/fault_bench [n reps k]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "bench_support.h"
#include "spawner/child_process.h"

using namespace aiac;

namespace {

// Runs the spawner on `job` with `extra` arguments; the summary, or null when the run failed.
nlohmann::json Run(const std::string& dir, const std::string& name, const std::string& job,
                   std::vector<std::string> extra) {
  const std::string json = dir + "/" + name + ".json";
  std::vector<std::string> argv{spawner::SelfDirectory() + "/aiac-spawner",
                                "run",
                                job,
                                "--json",
                                json,
                                "--log-level",
                                "warn"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  auto child = spawner::ChildProcess::Spawn(argv, dir + "/" + name + ".log");
  if (!child.ok() || child->WaitFor(std::chrono::minutes(10)).value_or(-1) != 0) {
    std::printf("run %s failed: see %s/%s.log\n", name.c_str(), dir.c_str(), name.c_str());
    return nullptr;
  }
  std::ifstream in(json);
  return nlohmann::json::parse(in);
}

// Iterations per task per second of computing (tasks started to global convergence).
double Rate(const nlohmann::json& j) {
  if (j.is_null() || j["compute_seconds"].get<double>() <= 0) return -1;
  double sum = 0;
  for (const auto& it : j["iterations"]["per_task"]) sum += it.get<double>();
  return sum / static_cast<double>(j["iterations"]["per_task"].size()) /
         j["compute_seconds"].get<double>();
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 200000;
  const int reps = argc > 2 ? std::max(1, std::atoi(argv[2])) : 3;
  const int k = argc > 3 ? std::max(1, std::atoi(argv[3])) : 10;
  const std::string dir = std::filesystem::temp_directory_path().string() + "/aiac-fault-bench-" +
                          std::to_string(getpid());
  std::filesystem::create_directories(dir);
  auto write_job = [&](const std::string& name, const std::string& options) {
    const std::string path = dir + "/" + name + ".toml";
    std::ofstream(path) << "name = \"fault-bench\"\napp = \"cg\"\ntimeout_s = 600\n"
                        << options << "[params]\ninner = \"cg\"\nn = " << n
                        << "\nbandwidth = 12\nseed = 7\ntolerance = 1e-9\n";
    return path;
  };
  struct Config {
    std::string label, job;
    std::vector<double> rates, ratios;  // per turn; ratios against no checkpoints
    uint64_t copies;                    // checkpoint copies the backups acknowledged, all turns
  };
  // The second "no checkpoints" measures the noise: the ratio between two identical setups.
  std::vector<Config> configs = {
      {"no checkpoints", write_job("none", "backups = 0\n"), {}, {}, 0},
      {"no checkpoints, again", write_job("none", "backups = 0\n"), {}, {}, 0},
      {"every iteration",
       write_job("every1", "checkpoint_seconds = 0\ncheckpoint_every = 1\n"),
       {},
       {},
       0},
      {"every " + std::to_string(k) + " iterations",
       write_job("every", "checkpoint_seconds = 0\ncheckpoint_every = " + std::to_string(k) + "\n"),
       {},
       {},
       0},
      {"every second (default)", write_job("timed", ""), {}, {}, 0},
  };
  for (int r = 0; r < reps; ++r) {
    // Each turn starts with another setup: the first run of a turn is often the slowest.
    std::vector<double> rates(configs.size(), -1);
    for (size_t i = 0; i < configs.size(); ++i) {
      const size_t c = (i + static_cast<size_t>(r)) % configs.size();
      auto j = Run(dir, "rate-" + std::to_string(c) + "-" + std::to_string(r), configs[c].job,
                   {"--local", "2", "--sync"});
      rates[c] = Rate(j);
      if (!j.is_null()) configs[c].copies += j["checkpoints"]["written"].get<uint64_t>();
    }
    for (size_t c = 0; c < configs.size(); ++c) {
      configs[c].rates.push_back(rates[c]);
      configs[c].ratios.push_back(rates[c] > 0 && rates[0] > 0 ? rates[c] / rates[0] : -1);
    }
  }

  // Kill-to-resume: two of four task daemons SIGKILLed one after the other, spares standing by.
  auto killed = Run(dir, "kill", write_job("kill", "tasks = 4\ncheckpoint_seconds = 0.2\n"),
                    {"--local", "6", "--kill-every", "1", "--kill-count", "2", "--kill-seed", "3"});
  std::filesystem::remove_all(dir);

  std::printf("CG n = %d, 2 tasks on 2 local daemons (sync), %u cores, median of %d turns\n", n,
              std::thread::hardware_concurrency(), reps);
  for (size_t c = 0; c < configs.size(); ++c) {
    const double rate = bench::Median(configs[c].rates);
    const double ratio = bench::Median(configs[c].ratios);
    std::printf("%-26s %8.1f iterations/s per task", configs[c].label.c_str(), rate);
    if (c > 0 && ratio > 0)
      std::printf(", %.3fx of no checkpoints (overhead %+.1f %%)", ratio, (1 - ratio) * 100);
    if (configs[c].copies > 0)
      std::printf(", %llu checkpoint copies", static_cast<unsigned long long>(configs[c].copies));
    std::printf("\n");
  }
  if (!killed.is_null() && !killed["replacements"].empty()) {
    double worst = 0, sum = 0;
    for (const auto& rep : killed["replacements"]) {
      worst = std::max(worst, rep["seconds_to_resume"].get<double>());
      sum += rep["seconds_to_resume"].get<double>();
    }
    const double mean = sum / static_cast<double>(killed["replacements"].size());
    const double setup = killed["setup_seconds"].get<double>();
    std::printf(
        "kill to resumed iteration: mean %.3f s, max %.3f s over %zu kills (goal < 2 s: %.2fx of "
        "it); "
        "setting up all tasks at the start took %.3f s (resume / setup: %.2fx); %s\n",
        mean, worst, killed["replacements"].size(), worst / 2.0, setup,
        setup > 0 ? mean / setup : -1.0, killed["status"].get<std::string>().c_str());
  } else {
    std::printf("kill to resumed iteration: the run with kills did not complete\n");
  }
  return 0;
}
