// `aiac-spawner plot HISTORY.csv -o OUT.png [--title T]`: draws a run's convergence history
// (`run --history`, run_history.h) with gnuplot: each task's local change against time (log
// scale), its daemon's losses (red crosses), its resumptions (green circles), item moves (grey
// triangles) and the gathered residuals (black diamonds). Exit 0 when the picture is written, 1
// when gnuplot is missing or failed, 2 when the file is not a history (one line on stderr).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "core/status.h"

namespace aiac::spawner {

struct PlotArgs {
  std::string history;
  std::string out;
  std::string title;
};

// The gnuplot commands that draw `csv` (a history's text) into `out`, after the terminal line;
// InvalidArgument naming the line when the text is not a history.
Result<std::string> HistoryPlotScript(const std::string& csv, const std::string& out,
                                      const std::string& title);

CLI::App* AddPlotCommand(CLI::App& app, PlotArgs& args);
int PlotCommand(const PlotArgs& args);

}  // namespace aiac::spawner
