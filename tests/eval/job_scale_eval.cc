// One job of many tasks (docs/scale.md, "One job of hundreds of tasks"): the ring, synthetic
// and CG jobs on 16, 64, 256, 512 and 1,024 tasks (--quick: 16 and 64), each on `run --local D`
// with D = tasks x 75 / 64 real daemon processes (1,200 for 1,024 tasks), the work of each task the
// same at every size. Writes DIR/job_scale.json ({"rows": [{"app", "tasks", "daemons", "status",
// "setup_seconds", "iterate_seconds", "detection_seconds", "spawner_cpu", "setup_vs_16",
// "detection_vs_16", "spawner_cpu_vs_16"}]}) and DIR/job_scale.png.
//
//   build/bin/job_scale_eval --out DIR [--quick]
//
// setup_seconds: daemons granted to every task ready (plugins shipped, tasks built);
// detection_seconds: every task locally converged to global convergence declared;
// spawner_cpu: the spawner's CPU seconds over its wall seconds (a share of one core). Ratios are
// against 16 tasks of the same app in the same run. Every process shares this host's cores, so
// the larger sizes measure the middleware under an oversubscribed host, not its speed.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "eval/eval_support.h"

namespace {

// A job whose tasks each hold the same work whatever their number.
std::string JobText(const std::string& app, int tasks) {
  std::ostringstream job;
  job << "name = \"scale-" << app << "-" << tasks << "\"\napp = \"" << app
      << "\"\ntasks = " << tasks << "\ntimeout_s = 900\n[params]\n";
  if (app == "ring") {
    job << "rounds = 20\n";
  } else if (app == "synthetic") {
    job << "items = " << 200 * tasks
        << "\niterations = 20\nbase_cost = 400\nphase_iterations = 10\nhot_fraction = 0.25\n"
           "hot_factor = 4\nseed = 1\n";
  } else {
    job << "n = " << 500 * tasks << "\nbandwidth = 12\nseed = 7\ntolerance = 1e-9\n";
  }
  return job.str();
}

// The jobs measured; the plot names them in this order (its `word` list).
const std::vector<std::string> kApps = {"ring", "synthetic", "cg"};

double Number(const nlohmann::json& summary, const char* key) {
  const auto it = summary.find(key);
  return it != summary.end() && it->is_number() ? it->get<double>() : NAN;
}

}  // namespace

int main(int argc, char** argv) {
  const auto args = aiac::eval::ParseEvalArgs(argc, argv, "job_scale_eval");
  const std::vector<int> sizes =
      args.quick ? std::vector<int>{16, 64} : std::vector<int>{16, 64, 256, 512, 1024};
  const std::string work = args.out + "/job_scale-runs";
  std::filesystem::create_directories(work);
  nlohmann::json rows = nlohmann::json::array();
  std::map<std::string, std::ostringstream> dat;
  std::printf("%-9s %6s %7s %10s %9s %10s %9s %9s %10s %9s\n", "app", "tasks", "daemons", "status",
              "set-up s", "x16", "iterate s", "detect s", "x16", "spawner");
  for (const std::string& app : kApps) {
    double setup16 = NAN, detection16 = NAN, cpu16 = NAN;
    for (int tasks : sizes) {
      const int daemons = tasks * 75 / 64;
      const std::string tag = app + "-" + std::to_string(tasks);
      const std::string job = work + "/" + tag + ".toml";
      std::ofstream(job) << JobText(app, tasks);
      auto summary = aiac::eval::RunSpawner({"--local", std::to_string(daemons), job},
                                            work + "/" + tag + ".json", work + "/" + tag + ".log");
      const std::string status = summary.value("status", "error");
      const bool ok = status == "converged";
      const double setup = ok ? Number(summary, "setup_seconds") : NAN;
      const double iterate = ok ? summary["phases"]["iterate"].get<double>() : NAN;
      const double detection = ok ? Number(summary, "detection_seconds") : NAN;
      const double wall = Number(summary, "wall_seconds");
      const double cpu = ok && wall > 0 ? Number(summary, "spawner_cpu_seconds") / wall : NAN;
      if (tasks == sizes.front()) setup16 = setup, detection16 = detection, cpu16 = cpu;
      rows.push_back({{"app", app},
                      {"tasks", tasks},
                      {"daemons", daemons},
                      {"status", status},
                      {"setup_seconds", aiac::eval::NumberOrNull(setup)},
                      {"iterate_seconds", aiac::eval::NumberOrNull(iterate)},
                      {"detection_seconds", aiac::eval::NumberOrNull(detection)},
                      {"spawner_cpu", aiac::eval::NumberOrNull(cpu)},
                      {"setup_vs_16", aiac::eval::NumberOrNull(setup / setup16)},
                      {"detection_vs_16", aiac::eval::NumberOrNull(detection / detection16)},
                      {"spawner_cpu_vs_16", aiac::eval::NumberOrNull(cpu / cpu16)}});
      std::printf("%-9s %6d %7d %10s %9.2f %9.1fx %9.2f %9.3f %9.1fx %8.1f%%\n", app.c_str(), tasks,
                  daemons, status.c_str(), setup, setup / setup16, iterate, detection,
                  detection / detection16, 100 * cpu);
      if (!ok) std::printf("  %s: %s\n", tag.c_str(), summary.value("error", "").c_str());
      std::fflush(stdout);
      if (ok) dat[app] << tasks << " " << setup << " " << detection << " " << 100 * cpu << "\n";
    }
  }
  aiac::eval::WriteTable(args.out, "job_scale", rows);
  std::string data;
  for (const std::string& app : kApps) data += dat[app].str() + "\n\n";
  aiac::eval::Plot(
      args.out, "job_scale", data,
      "set title 'One job against its task count (run --local, tasks x 75/64 daemons)'\n"
      "set logscale xy\nset xlabel 'tasks'\nset ylabel 'seconds'\nset y2label 'spawner CPU, % "
      "of a core'\nset y2tics\nset logscale y2\nset key top left\nset grid\n"
      "plot for [i=0:2] datafile index i using 1:2 with linespoints lw 2 title "
      "word('ring synthetic cg', i+1).' set-up', \\\n"
      "     for [i=0:2] datafile index i using 1:3 with linespoints dt 2 title "
      "word('ring synthetic cg', i+1).' detection', \\\n"
      "     for [i=0:2] datafile index i using 1:4 axes x1y2 with points pt 7 title "
      "word('ring synthetic cg', i+1).' spawner CPU'\n");
  std::printf("table: %s/job_scale.json, plot: %s/job_scale.png, runs: %s\n", args.out.c_str(),
              args.out.c_str(), work.c_str());
  return 0;
}
