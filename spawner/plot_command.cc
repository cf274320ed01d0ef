#include "spawner/plot_command.h"

#include <spdlog/fmt/fmt.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "core/read_file.h"
#include "core/temp_dir.h"

namespace aiac::spawner {

namespace {

constexpr const char* kHeader = "seconds,event,task,incarnation,iteration,change,residual";
// Tasks named in the key; more would crowd the picture (their lines are still drawn).
constexpr size_t kKeyTasks = 12;

struct Point {
  double t, y;
};

std::vector<std::string> Split(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, ',')) cells.push_back(cell);
  if (!line.empty() && line.back() == ',') cells.emplace_back();
  return cells;
}

bool Number(const std::string& text, double& out) {
  if (text.empty()) return false;
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && std::isfinite(out);
}

// A gnuplot datablock of points, one block per series (separated for `index`).
std::string Block(const std::string& name, const std::vector<std::vector<Point>>& series) {
  std::string out = "$" + name + " << EOD\n";
  for (const auto& s : series) {
    for (const Point& p : s) out += fmt::format("{:.6g} {:.6g}\n", p.t, p.y);
    out += "\n\n";
  }
  return out + "EOD\n";
}

std::string Quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

}  // namespace

Result<std::string> HistoryPlotScript(const std::string& csv, const std::string& out,
                                      const std::string& title) {
  std::istringstream in(csv);
  std::string line;
  if (!std::getline(in, line) || line != kHeader) {
    return InvalidArgument(std::string("not a run history: its first line is not '") + kHeader +
                           "' (run --history writes one)");
  }
  std::map<size_t, std::vector<Point>> reports;
  std::map<size_t, double> last_change;
  std::vector<Point> failures, resumed, moves, residuals;
  size_t number = 1;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    const auto c = Split(line);
    double t = 0, task = 0, change = 0;
    if (c.size() != 7 || !Number(c[0], t)) {
      return InvalidArgument(
          fmt::format("history line {}: not 7 cells starting with a time", number));
    }
    const std::string& event = c[1];
    const bool has_task = Number(c[2], task) && task >= 0 && task < 1e7;
    const auto id = static_cast<size_t>(task);
    if (event == "residual") {
      double r = 0;
      if (Number(c[6], r) && r > 0) residuals.push_back({t, r});
      continue;
    }
    if (!has_task) return InvalidArgument(fmt::format("history line {}: no task", number));
    if (event == "report") {
      if (!Number(c[5], change)) {
        return InvalidArgument(fmt::format("history line {}: a report without a change", number));
      }
      if (change > 0) reports[id].push_back({t, change});
      last_change[id] = change;
    } else if (event == "failure" || event == "resumed" || event == "move") {
      // Drawn on the task's curve, where it stood then.
      const double y = last_change.count(id) && last_change[id] > 0 ? last_change[id] : NAN;
      if (std::isnan(y)) continue;
      (event == "failure" ? failures : event == "resumed" ? resumed : moves).push_back({t, y});
    } else {
      return InvalidArgument(fmt::format("history line {}: unknown event '{}'", number, event));
    }
  }
  if (reports.empty()) return InvalidArgument("the history holds no task report with a change");
  std::vector<std::vector<Point>> series;
  std::vector<size_t> ids;
  for (auto& [id, points] : reports) {
    ids.push_back(id);
    series.push_back(std::move(points));
  }
  std::string script = Block("reports", series) + Block("failures", {failures}) +
                       Block("resumed", {resumed}) + Block("moves", {moves}) +
                       Block("residuals", {residuals});
  script += "set output " + Quoted(out) + "\n";
  script += "set title " + Quoted(title) + "\n";
  script +=
      "set logscale y\nset format y '%.0e'\nset grid\nset key outside right top\n"
      "set xlabel 'seconds since the start'\nset ylabel 'local change (residual)'\n";
  std::string plot = "plot";
  for (size_t i = 0; i < ids.size(); ++i) {
    plot += fmt::format(
        "{} $reports index {} using 1:2 with lines lw 1.5 {}", i ? ", \\\n" : " ", i,
        i < kKeyTasks ? fmt::format("title 'task {}'", ids[i]) : std::string("notitle"));
  }
  const auto marks = [&](const char* block, const std::vector<Point>& points, const char* style,
                         const char* name) {
    if (!points.empty())
      plot += fmt::format(", \\\n ${} using 1:2 {} title '{}'", block, style, name);
  };
  marks("failures", failures, "with points pt 2 ps 2.5 lw 3 lc rgb 'red'", "daemon lost");
  marks("resumed", resumed, "with points pt 6 ps 2 lw 2 lc rgb 'dark-green'", "resumed");
  marks("moves", moves, "with points pt 8 ps 1.2 lc rgb 'gray40'", "items moved");
  marks("residuals", residuals, "with points pt 13 ps 1.8 lc rgb 'black'", "residual");
  return script + plot + "\n";
}

CLI::App* AddPlotCommand(CLI::App& app, PlotArgs& args) {
  CLI::App* cmd = app.add_subcommand(
      "plot", "draw a run's convergence history (run --history) as a PNG, with gnuplot");
  cmd->add_option("history", args.history, "the history file (CSV)")->required();
  cmd->add_option("-o,--out", args.out, "the picture to write (PNG)")->required();
  cmd->add_option("--title", args.title, "the picture's title (default: the file's name)");
  return cmd;
}

int PlotCommand(const PlotArgs& args) {
  auto csv = ReadWholeFile(args.history);
  if (!csv.ok()) {
    std::fprintf(stderr, "aiac-spawner plot: %s\n", csv.status().message().c_str());
    return 2;
  }
  const std::string title =
      args.title.empty() ? std::filesystem::path(args.history).filename().string() : args.title;
  auto script = HistoryPlotScript(*csv, args.out, title);
  if (!script.ok()) {
    std::fprintf(stderr, "aiac-spawner plot: %s: %s\n", args.history.c_str(),
                 script.status().message().c_str());
    return 2;
  }
  auto dir = MakeTempDir("aiac-plot");
  if (!dir.ok()) {
    std::fprintf(stderr, "aiac-spawner plot: %s\n", dir.status().message().c_str());
    return 1;
  }
  const std::string gp = *dir + "/plot.gp", log = *dir + "/gnuplot.log";
  struct Remove {
    std::string dir;
    ~Remove() {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  } remove{*dir};
  // The cairo terminal draws smoother lines; gnuplot-nox has only the gd one.
  for (const char* terminal :
       {"pngcairo size 1100,650 noenhanced", "png size 1100,650 noenhanced"}) {
    std::ofstream(gp) << "set terminal " << terminal << "\n" << *script;
    const std::string command = "gnuplot " + Quoted(gp) + " 2>" + Quoted(log);
    if (std::system(command.c_str()) == 0) {
      std::printf("%s: %s drawn\n", args.out.c_str(), args.history.c_str());
      return 0;
    }
  }
  auto why = ReadWholeFile(log);
  std::string first = why.ok() ? why->substr(0, why->find('\n')) : "";
  std::fprintf(stderr, "aiac-spawner plot: gnuplot failed or is missing%s%s\n",
               first.empty() ? "" : ": ", first.c_str());
  return 1;
}

}  // namespace aiac::spawner
