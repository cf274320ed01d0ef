#include "mapping/baselines.h"

#include <algorithm>
#include <deque>
#include <numeric>

#include "mapping/maheve.h"

namespace aiac::mapping {

// ---------------------------------------------------------------- default

InitialMapping DefaultMapper::Map(const model::Platform& platform, const model::Tig& tig) const {
  InitialMapping out{0, {}, {}, {}, Placement(platform, tig)};
  out.hd = HeterogeneityDegree(platform, out.placement);
  const std::vector<int> free = FreeInGivenOrder(platform, out.placement);
  for (int t = 0; t < static_cast<int>(tig.size()); ++t) {
    out.placement.Assign(t, free[t]);
    out.task_order.push_back(t);
  }
  return out;
}

int DefaultMapper::Replace(const model::Platform& platform, const model::Tig&,
                           const Placement& placement, int, int) const {
  const auto free = FreeInGivenOrder(platform, placement);
  return free.empty() ? -1 : free.front();
}

std::vector<int> DefaultMapper::FreeInGivenOrder(const model::Platform& platform,
                                                 const Placement& placement) {
  std::vector<int> free;
  for (int n : platform.given_order()) {
    if (placement.IsFree(n)) free.push_back(n);
  }
  return free;
}

// ---------------------------------------------------------------- AIAC-QM

int BestEtNode(const model::Platform& platform, const model::Tig& tig, const Placement& placement,
               int task) {
  // wl depends only on the clusters, so per cluster the communication term is the same for all
  // its nodes and the best node is its most powerful free one: O(|C| d) per task, not O(|N| d).
  int best = -1;
  double best_et = 0;
  const auto& nodes = platform.nodes();
  for (int c = 0; c < static_cast<int>(platform.clusters().size()); ++c) {
    const auto free = placement.FreeNodes(c);
    if (free.empty()) continue;
    double comm = 0;
    for (const auto& n : tig.neighbours(task)) {
      const int other = placement.node_of(n.task);
      if (other >= 0) comm += n.volume * platform.ClusterLatency(c, nodes[other].cluster);
    }
    const int node = free.front();
    const double et = tig.cost(task) / nodes[node].power + comm;  // ET(V_i), section 3.1
    if (best < 0 || et < best_et || (et == best_et && MorePowerful(nodes[node], nodes[best]))) {
      best = node;
      best_et = et;
    }
  }
  return best;
}

InitialMapping AiacQm::Map(const model::Platform& platform, const model::Tig& tig) const {
  InitialMapping out{0, {}, {}, {}, Placement(platform, tig)};
  out.hd = HeterogeneityDegree(platform, out.placement);
  out.task_order.resize(tig.size());
  std::iota(out.task_order.begin(), out.task_order.end(), 0);
  std::sort(out.task_order.begin(), out.task_order.end(), [&](int a, int b) {
    if (tig.cost(a) != tig.cost(b)) return tig.cost(a) > tig.cost(b);
    return tig.id(a) < tig.id(b);
  });
  // Each cluster's free nodes, most powerful first; a cursor per cluster replaces FreeNodes()
  // so the whole mapping stays O(|V| |C| d).
  const int nc = static_cast<int>(platform.clusters().size());
  std::vector<std::vector<int>> free(nc);
  std::vector<size_t> cursor(nc, 0);
  for (int c = 0; c < nc; ++c) free[c] = out.placement.FreeNodes(c);
  const auto& nodes = platform.nodes();
  for (int task : out.task_order) {
    int best_c = -1;
    double best_et = 0;
    for (int c = 0; c < nc; ++c) {
      if (cursor[c] == free[c].size()) continue;
      const int node = free[c][cursor[c]];
      double et = tig.cost(task) / nodes[node].power;
      for (const auto& n : tig.neighbours(task)) {
        const int other = out.placement.node_of(n.task);
        if (other >= 0) et += n.volume * platform.ClusterLatency(c, nodes[other].cluster);
      }
      if (best_c < 0 || et < best_et ||
          (et == best_et && MorePowerful(nodes[node], nodes[free[best_c][cursor[best_c]]]))) {
        best_c = c;
        best_et = et;
      }
    }
    out.placement.Assign(task, free[best_c][cursor[best_c]++]);
  }
  return out;
}

int AiacQm::Replace(const model::Platform& platform, const model::Tig& tig,
                    const Placement& placement, int, int task) const {
  return BestEtNode(platform, tig, placement, task);  // FT-AIAC-QM
}

// ---------------------------------------------------------------- F-EC

namespace {

// Clusters by total free power, descending (ties: name).
std::vector<int> ClustersByFreePower(const model::Platform& platform, const Placement& placement) {
  const int nc = static_cast<int>(platform.clusters().size());
  std::vector<double> power(nc, 0);
  for (int c = 0; c < nc; ++c) {
    for (int n : placement.FreeNodes(c)) power[c] += platform.nodes()[n].power;
  }
  std::vector<int> order(nc);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    if (power[a] != power[b]) return power[a] > power[b];
    return platform.clusters()[a].name < platform.clusters()[b].name;
  });
  return order;
}

}  // namespace

InitialMapping FarhatEdgeCut::Map(const model::Platform& platform, const model::Tig& tig) const {
  InitialMapping out{0, {}, {}, {}, Placement(platform, tig)};
  out.hd = HeterogeneityDegree(platform, out.placement);
  const int v = static_cast<int>(tig.size());
  // Heaviest first (ties: id): the seeds of the regions.
  std::vector<int> seeds(v);
  std::iota(seeds.begin(), seeds.end(), 0);
  std::sort(seeds.begin(), seeds.end(), [&](int a, int b) {
    if (tig.cost(a) != tig.cost(b)) return tig.cost(a) > tig.cost(b);
    return tig.id(a) < tig.id(b);
  });
  std::vector<bool> taken(v, false);
  int placed = 0;
  for (int c : ClustersByFreePower(platform, out.placement)) {
    const std::vector<int> nodes = out.placement.FreeNodes(c);
    size_t used = 0;
    size_t next_seed = 0;  // from the top again: the last region's border went back to the pool
    std::deque<int> frontier;
    while (used < nodes.size() && placed < v) {
      if (frontier.empty()) {
        while (taken[seeds[next_seed]]) ++next_seed;
        frontier.push_back(seeds[next_seed]);
        taken[seeds[next_seed]] = true;
      }
      const int task = frontier.front();
      frontier.pop_front();
      out.placement.Assign(task, nodes[used++]);
      out.task_order.push_back(task);
      ++placed;
      // Heaviest edges first: the cut between clusters stays light.
      std::vector<model::Adjacent> next = tig.neighbours(task);
      std::sort(next.begin(), next.end(), [&](const model::Adjacent& a, const model::Adjacent& b) {
        if (a.volume != b.volume) return a.volume > b.volume;
        return tig.id(a.task) < tig.id(b.task);
      });
      for (const auto& n : next) {
        if (!taken[n.task]) {
          taken[n.task] = true;
          frontier.push_back(n.task);
        }
      }
    }
    // The region's unplaced border goes back to the pool for the next cluster.
    for (int t : frontier) taken[t] = false;
    if (placed == v) break;
  }
  AIAC_CHECK(placed == v);
  return out;
}

int FarhatEdgeCut::Replace(const model::Platform& platform, const model::Tig& tig,
                           const Placement& placement, int, int task) const {
  // FT-FEC: the cluster holding most of the task's placed neighbours (ties: the initial cluster
  // order), its most powerful free node; clusters without a free node are skipped.
  const int nc = static_cast<int>(platform.clusters().size());
  std::vector<int> held(nc, 0);
  for (const auto& n : tig.neighbours(task)) {
    const int node = placement.node_of(n.task);
    if (node >= 0) ++held[platform.nodes()[node].cluster];
  }
  std::vector<int> order = ClustersByFreePower(platform, placement);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return held[a] > held[b]; });
  for (int c : order) {
    const auto free = placement.FreeNodes(c);
    if (!free.empty()) return free.front();
  }
  return -1;
}

// ---------------------------------------------------------------- factory

Result<std::unique_ptr<Mapper>> MakeMapper(std::string_view algo, double reserve) {
  if (!(reserve >= 0 && reserve < 1)) return InvalidArgument("reserve must be in [0, 1)");
  if (algo == "maheve") return std::unique_ptr<Mapper>(new Maheve(reserve));
  if (algo == "default") return std::unique_ptr<Mapper>(new DefaultMapper());
  if (algo == "aiac-qm") return std::unique_ptr<Mapper>(new AiacQm());
  if (algo == "f-ec") return std::unique_ptr<Mapper>(new FarhatEdgeCut());
  return InvalidArgument("unknown mapping algorithm '" + std::string(algo) +
                         "' (expected maheve, default, aiac-qm or f-ec)");
}

}  // namespace aiac::mapping
