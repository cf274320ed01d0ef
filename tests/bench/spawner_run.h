// A benchmark's `aiac-spawner run` and the summary it wrote (header only: each benchmark is one
// executable).
#pragma once

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/self_directory.h"
#include "spawner/child_process.h"

namespace aiac::bench {

// Runs `aiac-spawner run ARGS --json DIR/TAG.json --log-level warn`, its output in DIR/TAG.log:
// the summary when the run converged, else null.
inline nlohmann::json ConvergedRun(const std::string& dir, const std::string& tag,
                                   const std::vector<std::string>& args) {
  const std::string json = dir + "/" + tag + ".json";
  std::vector<std::string> argv{SelfDirectory() + "/aiac-spawner", "run"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"--json", json, "--log-level", "warn"});
  auto child = spawner::ChildProcess::Spawn(argv, dir + "/" + tag + ".log");
  if (!child.ok() || child->WaitFor(std::chrono::minutes(10)).value_or(-1) != 0) return nullptr;
  std::ifstream in(json);
  auto summary = nlohmann::json::parse(in, nullptr, false);
  if (!summary.is_object() || summary["status"] != "converged") return nullptr;
  return summary;
}

// Every task's iterations over the iterate phase of a summary (-1 without one).
inline double IterationRate(const nlohmann::json& summary) {
  const double iterate = summary["phases"]["iterate"].get<double>();
  if (!(iterate > 0)) return -1;
  double iterations = 0;
  for (const auto& t : summary["per_task"]) iterations += t["iterations"].get<double>();
  return iterations / iterate;
}

}  // namespace aiac::bench
