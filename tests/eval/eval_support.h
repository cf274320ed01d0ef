// What the experiments of tests/eval share: their command line (--out DIR, --seed S, --quick),
// running `aiac-spawner run` and reading its summary, and writing the JSON table and the plot.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace aiac::eval {

struct EvalArgs {
  std::string out = "eval-out";
  uint64_t seed = 1;
  bool quick = false;
};

// Parses --out DIR, --seed S, --quick; exits 2 with a one-line error on anything else.
EvalArgs ParseEvalArgs(int argc, char** argv, const char* name);

// One `aiac-spawner run` with these arguments (the spawner next to this executable), its output
// in `log`; the summary (--json) it wrote, or a summary with "status": "error" and "error".
nlohmann::json RunSpawner(const std::vector<std::string>& args, const std::string& json,
                          const std::string& log);

// A table cell for a measured number: null where there is none (NaN: no run succeeded).
nlohmann::json NumberOrNull(double value);

// Writes {"rows": rows} to DIR/NAME.json.
void WriteTable(const std::string& dir, const std::string& name, const nlohmann::json& rows);

// Plots with gnuplot into DIR/NAME.png: `script` is gnuplot commands after the terminal and
// output are set, reading DIR/NAME.dat (written from `data`). Prints a line and returns false
// when gnuplot is missing or fails (the table is still written).
bool Plot(const std::string& dir, const std::string& name, const std::string& data,
          const std::string& script);

}  // namespace aiac::eval
