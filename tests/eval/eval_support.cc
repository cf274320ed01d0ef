#include "eval/eval_support.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "spawner/child_process.h"

namespace aiac::eval {

EvalArgs ParseEvalArgs(int argc, char** argv, const char* name) {
  EvalArgs a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quick") {
      a.quick = true;
    } else if (arg == "--out" && i + 1 < argc) {
      a.out = argv[++i];
    } else if (arg == "--seed" && i + 1 < argc) {
      char* end = nullptr;
      a.seed = std::strtoull(argv[++i], &end, 10);
      if (*end != '\0' || a.seed == 0) {
        std::fprintf(stderr, "%s: --seed needs a positive integer\n", name);
        std::exit(2);
      }
    } else {
      std::fprintf(stderr, "usage: %s [--out DIR] [--seed S] [--quick]\n", name);
      std::exit(2);
    }
  }
  std::filesystem::create_directories(a.out);
  return a;
}

nlohmann::json RunSpawner(const std::vector<std::string>& args, const std::string& json,
                          const std::string& log) {
  std::vector<std::string> argv{spawner::SelfDirectory() + "/aiac-spawner", "run"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"--json", json, "--log-level", "warn"});
  std::filesystem::remove(json);
  auto child = spawner::ChildProcess::Spawn(argv, log);
  if (!child.ok()) return {{"status", "error"}, {"error", child.status().message()}};
  auto code = child->WaitFor(std::chrono::minutes(30));
  std::ifstream in(json);
  if (!in) {
    return {{"status", "error"},
            {"error", "no summary (exit " + std::to_string(code.value_or(-1)) + "), see " + log}};
  }
  return nlohmann::json::parse(in, nullptr, false);
}

nlohmann::json NumberOrNull(double value) {
  return std::isnan(value) ? nlohmann::json(nullptr) : nlohmann::json(value);
}

void WriteTable(const std::string& dir, const std::string& name, const nlohmann::json& rows) {
  std::ofstream(dir + "/" + name + ".json") << nlohmann::json{{"rows", rows}}.dump(2) << "\n";
}

bool Plot(const std::string& dir, const std::string& name, const std::string& data,
          const std::string& script) {
  const std::string base = dir + "/" + name;
  std::ofstream(base + ".dat") << data;
  std::ofstream(base + ".gp") << "set terminal pngcairo size 1000,600 noenhanced\nset output '"
                              << base << ".png'\ndatafile = '" << base << ".dat'\n"
                              << script;
  const std::string command = "gnuplot '" + base + ".gp' 2>'" + base + ".gp.log'";
  if (std::system(command.c_str()) != 0) {
    // pngcairo needs the cairo build of gnuplot; gnuplot-nox has the gd one.
    std::ofstream(base + ".gp") << "set terminal png size 1000,600 noenhanced\nset output '" << base
                                << ".png'\ndatafile = '" << base << ".dat'\n"
                                << script;
    if (std::system(command.c_str()) != 0) {
      std::printf(
          "no plot: gnuplot failed or is missing (see %s.gp.log); the table is in %s.json\n",
          base.c_str(), base.c_str());
      return false;
    }
  }
  return true;
}

}  // namespace aiac::eval
