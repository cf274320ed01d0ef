// DistPM against greedy on the TeraGrid-like platform (docs/results.md; the DistPM paper's
// Figure 5): the planned migration time of the workload that rebalances the sites, for several
// sizes of the migrated data and numbers of nodes. As in the paper's section 5.1 this is the
// cost model of both plans (its Figure 5 comes from the authors' simulation code, not from runs),
// here on the sites and links of conf/platforms/teragrid.toml:
//   - the nodes (4, 16 or 64, evenly over the four sites) hold a seeded random load each, from
//     half to one and a half times the mean; their targets are in proportion to their powers;
//   - each site is a group of the migration (its gateways carry its excess or deficit), a
//     channel between sites i and j costs alpha_ij + beta_ij x items (latency, and item bytes
//     over bandwidth);
//   - both plans come from lib/redistribution/distpm.h (LP (3) rounded, and the greedy of the
//     paper's reference [4]); the makespan is the slowest channel used.
// Rows: {"nodes", "migrated_mb", "seeds", "distpm_seconds", "greedy_seconds", "improvement"} with
// improvement = (greedy - distpm) / greedy, the paper's relative improvement (30-55 % in its
// Figure 5, decreasing as the data grows). Writes DIR/distpm.json and DIR/distpm.png.
//
//   build/bin/distpm_eval --out DIR [--seed S] [--quick]
#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>

#include "emulation/platform_file.h"
#include "eval/eval_support.h"
#include "redistribution/distpm.h"

namespace {

using aiac::emulation::PlatformFile;
using aiac::redistribution::MigrationInput;

constexpr double kItemBytes = 1024;  // one item of the migrated workload

// The migration input of one draw: `nodes` nodes over the platform's sites, `mean_items` items
// each on average.
MigrationInput Draw(const PlatformFile& p, int nodes, double mean_items, std::mt19937_64& rng) {
  const size_t sites = p.clusters.size();
  std::uniform_real_distribution<double> spread(0.5, 1.5);
  MigrationInput in;
  std::vector<double> load(sites, 0), power(sites, 0);
  for (int k = 0; k < nodes; ++k) {
    const size_t s = static_cast<size_t>(k) % sites;
    const auto& powers = p.clusters[s].powers;
    load[s] += std::round(mean_items * spread(rng));
    power[s] += powers[static_cast<size_t>(k / static_cast<int>(sites)) % powers.size()];
  }
  double total = 0, total_power = 0;
  for (size_t s = 0; s < sites; ++s) total += load[s], total_power += power[s];
  double assigned = 0;
  for (size_t s = 0; s < sites; ++s) {
    // Whole targets in proportion to power; the last site takes what rounding left.
    const double target =
        s + 1 < sites ? std::round(total * power[s] / total_power) : total - assigned;
    assigned += target;
    in.groups.push_back({p.clusters[s].name, load[s], target});
  }
  in.alpha.assign(sites, std::vector<double>(sites, 0));
  in.beta.assign(sites, std::vector<double>(sites, 0));
  for (size_t i = 0; i < sites; ++i) {
    for (size_t j = 0; j < sites; ++j) {
      const PlatformFile::Link l = p.Between(p.clusters[i].name, p.clusters[j].name);
      in.alpha[i][j] = l.latency_ms / 1e3;
      in.beta[i][j] = kItemBytes * 8 / (l.bandwidth_mbps * 1e6);
    }
  }
  return in;
}

}  // namespace

int main(int argc, char** argv) {
  const auto args = aiac::eval::ParseEvalArgs(argc, argv, "distpm_eval");
  auto platform = aiac::emulation::LoadPlatformFile(std::string(AIAC_SOURCE_DIR) +
                                                    "/conf/platforms/teragrid.toml");
  if (!platform.ok()) {
    std::printf("distpm_eval: %s\n", platform.status().message().c_str());
    return 1;
  }
  const int seeds = args.quick ? 5 : 30;
  const std::vector<int> node_counts =
      args.quick ? std::vector<int>{16, 64} : std::vector<int>{4, 16, 64};
  // Mean items per node: 1 KB each, from 10 KB to 100 MB per node.
  const std::vector<double> sizes = {10, 100, 1000, 10000, 100000};
  std::printf("DistPM vs greedy on %s: %zu sites, nodes %s, %d draws per cell\n",
              platform->name.c_str(), platform->clusters.size(),
              args.quick ? "16, 64" : "4, 16, 64", seeds);
  nlohmann::json rows = nlohmann::json::array();
  std::ostringstream dat;
  for (int nodes : node_counts) {
    for (double mean_items : sizes) {
      std::mt19937_64 rng(args.seed * 1000003 + static_cast<uint64_t>(nodes) * 101 +
                          static_cast<uint64_t>(mean_items));
      double distpm = 0, greedy = 0, migrated = 0;
      int ok = 0;
      for (int s = 0; s < seeds; ++s) {
        const MigrationInput in = Draw(*platform, nodes, mean_items, rng);
        auto plans = aiac::redistribution::PlanMigration(in);
        if (!plans.ok()) {
          std::printf("  %d nodes, %g items: %s\n", nodes, mean_items,
                      plans.status().message().c_str());
          continue;
        }
        double moved = 0;
        for (const auto& f : plans->distpm.flows) moved += static_cast<double>(f.amount);
        if (moved == 0) continue;  // already balanced: nothing to compare
        distpm += plans->distpm.makespan;
        greedy += plans->greedy.makespan;
        migrated += moved * kItemBytes / 1e6;
        ++ok;
      }
      const double d = ok ? distpm / ok : NAN, g = ok ? greedy / ok : NAN,
                   mb = ok ? migrated / ok : NAN;
      const double improvement = (g - d) / g;
      rows.push_back({{"nodes", nodes},
                      {"migrated_mb", aiac::eval::NumberOrNull(mb)},
                      {"seeds", ok},
                      {"distpm_seconds", aiac::eval::NumberOrNull(d)},
                      {"greedy_seconds", aiac::eval::NumberOrNull(g)},
                      {"improvement", aiac::eval::NumberOrNull(improvement)}});
      std::printf(
          "%3d nodes, %9.3f MB migrated: DistPM %9.4f s, greedy %9.4f s, improvement %5.1f %%\n",
          nodes, mb, d, g, 100 * improvement);
      std::fflush(stdout);
      dat << nodes << ' ' << mb << ' ' << 100 * improvement << "\n";
    }
    dat << "\n\n";
  }
  aiac::eval::WriteTable(args.out, "distpm", rows);
  std::string plot =
      "set title 'DistPM against greedy on the TeraGrid-like platform (planned migration time)'\n"
      "set logscale x\nset xlabel 'data migrated (MB)'\nset ylabel 'improvement over greedy "
      "(%)'\nset yrange [0:*]\n"
      "set key top right\nplot ";
  for (size_t k = 0; k < node_counts.size(); ++k) {
    plot += (k ? ", " : "") + std::string("datafile index ") + std::to_string(k) +
            " using 2:3 with linespoints title '" + std::to_string(node_counts[k]) + " nodes'";
  }
  aiac::eval::Plot(args.out, "distpm", dat.str(), plot + "\n");
  std::printf("table: %s/distpm.json, plot: %s/distpm.png\n", args.out.c_str(), args.out.c_str());
  return 0;
}
