// Ring redistribution against the naive nearest-neighbour shuffle (docs/results.md; the ring
// paper, ring-redistribution.md), in two parts:
//   - executed: the synthetic job (8 tasks, items of 16 KB) on the emulated
//     conf/platforms/ring-wan.toml, live balancing on (--balance dp), the items moving daemon to
//     daemon between neighbours on the ring of tasks, planned by the paper's bidirectional
//     algorithm (--migration ring) or as the nearest-neighbour shuffle (--migration nearest).
//     Site a0's nodes are overloaded and its link to b0 is slow; in turns (each starting with the
//     other planner, the job's seed changing with the turn): the seconds moving (first export to
//     last import, summed), the plans' one-port time on the links' figures, the wall time, and
//     the ratio of ring's to nearest's within a turn, median over the turns. Checks that both
//     runs of a turn end with the same checksum.
//   - planned: the cost model alone on rings of 8 and 32 processors (the paper's section 7
//     sizes) whose links are drawn from the TeraGrid-like platform's (each ring link one site
//     pair's, items of 16 KB), loads of 100 to 300 items and targets drawn the same way: both
//     plans' one-port makespans (ring_simulator.h), and their ratio.
// Rows: {"part": "executed", "migration", "runs", "seconds", "seconds_moving", "planned_seconds",
// "items_moved", "moving_vs_nearest", "wall_vs_nearest"} and {"part": "planned", "processors",
// "draws", "ring_seconds", "nearest_seconds", "ratio"}. Writes DIR/ring.json and DIR/ring.png.
//
//   build/bin/ring_eval --out DIR [--seed S] [--quick]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <sstream>

#include "emulation/platform_file.h"
#include "eval/eval_support.h"
#include "redistribution/ring_moves.h"

namespace {

using aiac::redistribution::PlanRingMoves;
using aiac::redistribution::RingMovesInput;
using aiac::redistribution::RingPlanner;

constexpr double kItemBytes = 16384;

double Median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// One ring of `n` processors on the platform's sites: each processor on a random site, a
// link's per-item time that of its two sites' link; loads and targets 100..300 items.
RingMovesInput Draw(const aiac::emulation::PlatformFile& p, int n, std::mt19937_64& rng) {
  std::uniform_int_distribution<size_t> site(0, p.clusters.size() - 1);
  std::uniform_int_distribution<int64_t> load(100, 300);
  std::vector<size_t> at;
  for (int i = 0; i < n; ++i) at.push_back(site(rng));
  const auto per_item = [&](size_t a, size_t b) {
    return kItemBytes * 8 /
           (p.Between(p.clusters[a].name, p.clusters[b].name).bandwidth_mbps * 1e6);
  };
  RingMovesInput in;
  int64_t total = 0;
  std::vector<double> weight;
  for (int i = 0; i < n; ++i) {
    in.items.push_back(load(rng));
    total += in.items.back();
    weight.push_back(static_cast<double>(load(rng)));
  }
  const double weights = std::accumulate(weight.begin(), weight.end(), 0.0);
  int64_t assigned = 0;
  for (int i = 0; i < n; ++i) {
    const int64_t target =
        i + 1 < n
            ? std::max<int64_t>(1, std::llround(static_cast<double>(total) * weight[i] / weights))
            : total - assigned;
    assigned += target;
    in.surplus.push_back(in.items[static_cast<size_t>(i)] - target);
  }
  for (int i = 0; i < n; ++i) {
    const size_t next = static_cast<size_t>((i + 1) % n),
                 prev = static_cast<size_t>((i + n - 1) % n);
    in.c_next.push_back(per_item(at[static_cast<size_t>(i)], at[next]));
    in.c_prev.push_back(per_item(at[static_cast<size_t>(i)], at[prev]));
  }
  return in;
}

}  // namespace

int main(int argc, char** argv) {
  const auto args = aiac::eval::ParseEvalArgs(argc, argv, "ring_eval");
  const std::string source = AIAC_SOURCE_DIR;
  std::filesystem::create_directories(args.out);
  nlohmann::json rows = nlohmann::json::array();
  std::ostringstream dat;

  // Executed.
  const int turns = args.quick ? 2 : 5;
  const std::vector<std::string> planners = {"ring", "nearest"};
  std::vector<std::vector<double>> wall(2), moving(2), planned(2), items(2);
  std::vector<double> moving_ratio, wall_ratio;
  bool ok = true;
  std::printf("ring vs nearest, executed: synthetic, 8 tasks on ring-wan (emulated), %d turns\n",
              turns);
  for (int t = 0; t < turns; ++t) {
    const std::string job = args.out + "/ring-job.toml";
    std::ofstream(job)
        << "name = \"ring-eval\"\napp = \"synthetic\"\ntasks = 8\ntimeout_s = 600\n"
        << "checkpoint_seconds = 5\n[params]\nitems = 4000\niterations = 100\nbase_cost = 2000\n"
        << "item_bytes = " << kItemBytes << "\nseed = " << args.seed + static_cast<uint64_t>(t)
        << "\n";
    double m[2] = {NAN, NAN}, w[2] = {NAN, NAN}, checksum[2] = {NAN, NAN};
    for (int k = 0; k < 2; ++k) {
      const int p = (k + t) % 2;
      const std::string name = args.out + "/ring-" + planners[p] + "-" + std::to_string(t + 1);
      auto j = aiac::eval::RunSpawner(
          {job, "--platform", source + "/conf/platforms/ring-wan.toml", "--local", "--split",
           "equal", "--mapping", "default", "--balance", "dp", "--migration", planners[p],
           "--platform-seed", std::to_string(args.seed + t)},
          name + ".json", name + ".log");
      if (j.value("status", "") != "converged") {
        std::printf("  turn %d, --migration %s: %s (see %s.log)\n", t + 1, planners[p].c_str(),
                    j.value("error", j.value("status", "?")).c_str(), name.c_str());
        ok = false;
        continue;
      }
      const auto& b = j["balancing"];
      checksum[p] = j["result"]["checksum"].get<double>();
      w[p] = j["wall_seconds"].get<double>();
      m[p] = b["seconds_moving"].get<double>();
      wall[p].push_back(w[p]);
      moving[p].push_back(m[p]);
      planned[p].push_back(b["planned_seconds"].get<double>());
      items[p].push_back(b["items_moved"].get<double>());
      std::printf(
          "  turn %d, --migration %-7s: %6.2f s, %6.3f s moving (planned %6.3f s), %5.0f items in "
          "%d "
          "redistributions\n",
          t + 1, planners[p].c_str(), w[p], m[p], planned[p].back(), items[p].back(),
          b["redistributions"].get<int>());
      std::fflush(stdout);
    }
    if (!std::isnan(checksum[0]) && !std::isnan(checksum[1]) && checksum[0] != checksum[1]) {
      std::printf("  WRONG: turn %d ended with checksums %.17g (ring) and %.17g (nearest)\n", t + 1,
                  checksum[0], checksum[1]);
      ok = false;
    }
    if (m[0] > 0 && m[1] > 0) moving_ratio.push_back(m[0] / m[1]);
    if (w[0] > 0 && w[1] > 0) wall_ratio.push_back(w[0] / w[1]);
    dat << t + 1 << ' ' << (std::isnan(m[0]) ? 0 : m[0]) << ' ' << (std::isnan(m[1]) ? 0 : m[1])
        << "\n";
  }
  dat << "\n\n";
  for (int p = 0; p < 2; ++p) {
    rows.push_back({{"part", "executed"},
                    {"migration", planners[p]},
                    {"runs", wall[p].size()},
                    {"seconds", aiac::eval::NumberOrNull(Median(wall[p]))},
                    {"seconds_moving", aiac::eval::NumberOrNull(Median(moving[p]))},
                    {"planned_seconds", aiac::eval::NumberOrNull(Median(planned[p]))},
                    {"items_moved", aiac::eval::NumberOrNull(Median(items[p]))},
                    {"moving_vs_nearest", aiac::eval::NumberOrNull(p ? 1.0 : Median(moving_ratio))},
                    {"wall_vs_nearest", aiac::eval::NumberOrNull(p ? 1.0 : Median(wall_ratio))}});
  }
  std::printf(
      "  medians: ring %.2f s wall, %.3f s moving; nearest %.2f s wall, %.3f s moving; ring vs "
      "nearest: "
      "moving %.2fx, wall %.2fx\n",
      Median(wall[0]), Median(moving[0]), Median(wall[1]), Median(moving[1]), Median(moving_ratio),
      Median(wall_ratio));

  // Planned, on the cost model.
  auto platform = aiac::emulation::LoadPlatformFile(source + "/conf/platforms/teragrid.toml");
  if (!platform.ok()) {
    std::printf("ring_eval: %s\n", platform.status().message().c_str());
    return 1;
  }
  const int draws = args.quick ? 50 : 300;
  std::printf("ring vs nearest, planned: rings on %s's links, %d draws per size\n",
              platform->name.c_str(), draws);
  for (int n : {8, 32}) {
    std::mt19937_64 rng(args.seed * 7919 + static_cast<uint64_t>(n));
    std::vector<double> ratios;
    double ring_sum = 0, nearest_sum = 0;
    for (int d = 0; d < draws; ++d) {
      const RingMovesInput in = Draw(*platform, n, rng);
      auto r = PlanRingMoves(in, RingPlanner::kOptimal);
      auto near = PlanRingMoves(in, RingPlanner::kNearest);
      if (!r.ok() || !near.ok() || !(near->planned_time > 0)) continue;
      ring_sum += r->planned_time;
      nearest_sum += near->planned_time;
      ratios.push_back(r->planned_time / near->planned_time);
    }
    const size_t got = ratios.size();
    rows.push_back({{"part", "planned"},
                    {"processors", n},
                    {"draws", got},
                    {"ring_seconds",
                     aiac::eval::NumberOrNull(got ? ring_sum / static_cast<double>(got) : NAN)},
                    {"nearest_seconds",
                     aiac::eval::NumberOrNull(got ? nearest_sum / static_cast<double>(got) : NAN)},
                    {"ratio", aiac::eval::NumberOrNull(Median(ratios))}});
    std::printf(
        "  %2d processors: ring %.3f s, nearest %.3f s (means), ring vs nearest %.2fx (median of "
        "%zu)\n",
        n, got ? ring_sum / static_cast<double>(got) : NAN,
        got ? nearest_sum / static_cast<double>(got) : NAN, Median(ratios), got);
  }
  aiac::eval::WriteTable(args.out, "ring", rows);
  aiac::eval::Plot(args.out, "ring", dat.str(),
                   "set title 'Ring plan against the nearest-neighbour shuffle, executed on "
                   "ring-wan (emulated)'\n"
                   "set xlabel 'turn'\nset ylabel 'seconds moving'\nset yrange [0:*]\nset xtics 1\n"
                   "set style data histograms\nset style fill solid 0.6\n"
                   "plot datafile using 2:xtic(1) title '--migration ring', '' using 3 title "
                   "'--migration nearest'\n");
  std::printf("table: %s/ring.json, plot: %s/ring.png\n", args.out.c_str(), args.out.c_str());
  return ok ? 0 : 1;
}
