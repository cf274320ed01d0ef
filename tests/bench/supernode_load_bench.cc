// What one super-node pays for the daemons it holds (issue 37, docs/scale.md): a real
// aiac-supernode, and `swarm` playing K daemons that heartbeat once a second; once all are
// registered, the super-node's CPU over a ten-second window (utime + stime from /proc/PID/stat)
// per heartbeat the daemons sent in it, and its resident memory per daemon held (above what it
// held empty). K = 250 is the baseline, measured in the same run; the others are printed as
// ratios against it (1.0: the cost per daemon does not grow with the platform). Registration
// runs at 1,000 daemons a second (`--ramp-s`); past one swarm's descriptor limit, several swarms
// play the K daemons; how many registrations one synced write stored is read from the
// super-node's metrics. Each K is measured twice: with the daemons asking to be answered as
// often as their silence limit needs (the default: one heartbeat in three or four) and with every
// heartbeat answered (`--supernode-timeout-ms 0`, as before 2026-11-29); the ratio is what the
// sparser answers save. With --out DIR, also DIR/supernode_load.json (a row per K) and
// DIR/supernode_load.png (the cost per heartbeat and per daemon against K: docs/results.md).
// Never fails on a time.
// Run: build/bin/supernode_load_bench [--out DIR] [K ...]   (default: 1000 4000)
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_support.h"
#include "eval/eval_support.h"
#include "support/http_client.h"
#include "support/processes.h"
#include "support/test_support.h"
#include "swarm_bench.h"

using namespace aiac;

namespace {

constexpr int kBaseline = 250;
constexpr double kWindowSeconds = 10;

// CPU seconds (user + system) process `pid` used so far; -1 when it is gone.
double CpuSeconds(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return -1;
  // Fields after the command (in parentheses, which may hold spaces): state is field 3.
  std::istringstream rest(line.substr(line.rfind(')') + 2));
  std::vector<std::string> f;
  for (std::string w; rest >> w;) f.push_back(w);
  if (f.size() < 13) return -1;
  return (std::stod(f[11]) + std::stod(f[12])) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// Resident memory of `pid` in KiB; -1 when it is gone.
double ResidentKib(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6));
  }
  return -1;
}

struct Figures {
  double register_s = -1;  // the swarms' start to all registered
  double cpu_share = -1;   // of one core, during the window
  double us_per_heartbeat = -1;
  double kib_per_daemon = -1;
  double per_write = -1;  // registrations stored by one synced write (group commit)
};

Figures Measure(const std::string& dir, int daemons, bool answer_all = false) {
  Figures out;
  const std::string tag = "k" + std::to_string(daemons) + (answer_all ? "-all" : "");
  const std::string metrics = bench::FreeLoopbackAddress();
  auto supernode = bench::StartBenchSupernode(dir, "sn1", tag, daemons, {"--metrics", metrics});
  const std::string addr = bench::SupernodeAddress(dir, "sn1", tag);
  if (addr.empty()) return out;
  const double empty_kib = ResidentKib(supernode.pid());
  const std::vector<std::string> extra =
      answer_all ? std::vector<std::string>{"--supernode-timeout-ms", "0"}
                 : std::vector<std::string>{};
  auto swarms = bench::StartSwarms(dir, {addr}, daemons, dir + "/" + tag + "-swarm", extra);
  out.register_s = bench::WaitAllSwarmsRegistered("supernode_load_bench", swarms);
  if (out.register_s < 0) return out;
  const std::string page = aiac::testing::HttpGet(metrics, "/metrics").body;
  out.per_write = aiac::testing::MetricValue(page, "aiac_daemon_registrations_total") /
                  aiac::testing::MetricValue(page, "aiac_registration_writes_total");
  std::this_thread::sleep_for(std::chrono::seconds(2));  // the last handshakes settle
  const double cpu0 = CpuSeconds(supernode.pid());
  const auto start = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(kWindowSeconds));
  const double cpu1 = CpuSeconds(supernode.pid());
  const double window = bench::SecondsSince(start);
  const double held_kib = ResidentKib(supernode.pid());
  out.cpu_share = (cpu1 - cpu0) / window;
  out.us_per_heartbeat = 1e6 * (cpu1 - cpu0) / (daemons * window);
  out.kib_per_daemon = (held_kib - empty_kib) / daemons;
  swarms.Stop();
  supernode.Signal(SIGTERM);
  supernode.WaitFor(std::chrono::seconds(60));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string out;
  if (argc > 2 && std::string(argv[1]) == "--out") {
    out = argv[2];
    argc -= 2;
    argv += 2;
  }
  const auto sizes = bench::SwarmSizes(argc, argv, "supernode_load_bench", 1, {1000, 4000});
  if (!sizes) return 2;
  aiac::testing::TempDir dir;
  const std::string d = dir.path();
  if (Status s = bench::WriteSwarmKeys(d, "supernode-load-bench-key-0123456789", {"sn1"});
      !s.ok()) {
    std::fprintf(stderr, "supernode_load_bench: %s\n", s.message().c_str());
    return 1;
  }
  const Figures base = Measure(d, kBaseline);
  std::printf("%8s %12s %10s %10s %14s %12s %16s %14s %14s %14s\n", "daemons", "register_s",
              "per_write", "cpu_core", "us_per_beat", "kib_per_d", "beat_cost_ratio",
              "memory_ratio", "us_all_beats", "asked_vs_all");
  const auto row = [&](int k, const Figures& f, const Figures& all) {
    std::printf("%8d %12.2f %10.1f %10.3f %14.1f %12.1f %16.2f %14.2f %14.1f %14.2f\n", k,
                f.register_s, f.per_write, f.cpu_share, f.us_per_heartbeat, f.kib_per_daemon,
                f.us_per_heartbeat / base.us_per_heartbeat, f.kib_per_daemon / base.kib_per_daemon,
                all.us_per_heartbeat, f.us_per_heartbeat / all.us_per_heartbeat);
  };
  nlohmann::json rows = nlohmann::json::array();
  std::string data;
  const auto keep = [&](int k, const Figures& f, const Figures& all) {
    row(k, f, all);
    std::fflush(stdout);
    // A figure a failed measurement left at -1 is null in the table.
    const auto cell = [](double v) { return v < 0 ? nlohmann::json(nullptr) : nlohmann::json(v); };
    rows.push_back(
        {{"daemons", k},
         {"register_seconds", cell(f.register_s)},
         {"registrations_per_write", cell(f.per_write)},
         {"cpu_core", cell(f.cpu_share)},
         {"us_per_heartbeat", cell(f.us_per_heartbeat)},
         {"kib_per_daemon", cell(f.kib_per_daemon)},
         {"heartbeat_vs_250", cell(f.us_per_heartbeat / base.us_per_heartbeat)},
         {"memory_vs_250", cell(f.kib_per_daemon / base.kib_per_daemon)},
         {"us_per_heartbeat_all_answered", cell(all.us_per_heartbeat)},
         {"asked_vs_all_answered", cell(f.us_per_heartbeat < 0 || all.us_per_heartbeat <= 0
                                            ? -1
                                            : f.us_per_heartbeat / all.us_per_heartbeat)}});
    if (f.cpu_share >= 0) {
      data += std::to_string(k) + " " + std::to_string(f.us_per_heartbeat) + " " +
              std::to_string(f.kib_per_daemon) + " " + std::to_string(f.cpu_share) + "\n";
    }
  };
  keep(kBaseline, base, Measure(d, kBaseline, true));
  for (int k : *sizes) {
    const Figures asked = Measure(d, k);
    keep(k, asked, Measure(d, k, true));
  }
  if (!out.empty()) {
    std::filesystem::create_directories(out);
    eval::WriteTable(out, "supernode_load", rows);
    eval::Plot(out, "supernode_load", data,
               "set title 'One super-node against the daemons it holds (1 heartbeat/s each)'\n"
               "set logscale x\nset xlabel 'daemons'\nset ylabel 'us per heartbeat, KiB per "
               "daemon'\nset yrange [0:*]\nset y2label 'super-node CPU, cores'\nset y2tics\n"
               "set y2range [0:*]\nset key below\nset grid\n"
               "plot datafile using 1:2 with linespoints lw 2 title 'CPU per heartbeat (us)', \\\n"
               "     datafile using 1:3 with linespoints lw 2 title 'memory per daemon (KiB)', \\\n"
               "     datafile using 1:4 axes x1y2 with linespoints dt 2 title 'CPU (cores)'\n");
    std::printf("table: %s/supernode_load.json, plot: %s/supernode_load.png\n", out.c_str(),
                out.c_str());
  }
  return 0;
}
