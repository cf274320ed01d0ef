#include "mapping/maheve.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace aiac::mapping {

namespace {

// Rounds up, ignoring floating-point noise above an integer (0.1 * 30 = 3.0000000000000004).
int CeilTolerant(double x) { return static_cast<int>(std::ceil(x - 1e-9)); }

}  // namespace

double HeterogeneityDegree(const model::Platform& platform, const Placement& placement) {
  double sum = 0, sum_sq = 0;
  int n = 0;
  for (int node : placement.AllFreeNodes()) {
    const double p = platform.nodes()[node].power;
    sum += p;
    ++n;
  }
  if (n == 0) return 0;
  const double mean = sum / n;
  for (int node : placement.AllFreeNodes()) {
    const double d = platform.nodes()[node].power - mean;
    sum_sq += d * d;
  }
  // hd = sigma_PN / avg_PN, population standard deviation, clamped to [0, 1].
  const double hd = std::sqrt(sum_sq / n) / mean;
  return std::clamp(hd, 0.0, 1.0);
}

std::vector<ClusterMark> SortClusters(const model::Platform& platform, const Placement& placement,
                                      double hd) {
  const auto& clusters = platform.clusters();
  std::vector<double> free_count(clusters.size(), 0), mean_power(clusters.size(), 0);
  double total_free = 0, total_mean = 0;
  for (size_t c = 0; c < clusters.size(); ++c) {
    double power = 0;
    for (int n : clusters[c].nodes) {
      if (!placement.IsFree(n)) continue;
      free_count[c] += 1;
      power += platform.nodes()[n].power;
    }
    mean_power[c] = free_count[c] > 0 ? power / free_count[c] : 0;  // C_Pf_i
    total_free += free_count[c];
    total_mean += mean_power[c];
  }
  std::vector<ClusterMark> marks;
  for (size_t c = 0; c < clusters.size(); ++c) {
    // normN(C_F_i) = 100 C_F_i / sum_j C_F_j;  normP(C_Pf_i) = 100 C_Pf_i / sum_j C_Pf_j.
    const double norm_n = total_free > 0 ? 100.0 * free_count[c] / total_free : 0;
    const double norm_p = total_mean > 0 ? 100.0 * mean_power[c] / total_mean : 0;
    // MAHEVE eq. (1): M_i = NC_Pf_i^hd + NC_F_i^(1-hd).
    marks.push_back(
        {static_cast<int>(c), clusters[c].name, std::pow(norm_p, hd) + std::pow(norm_n, 1 - hd)});
  }
  std::stable_sort(marks.begin(), marks.end(), [](const ClusterMark& a, const ClusterMark& b) {
    if (a.mark != b.mark) return a.mark > b.mark;
    return a.name < b.name;
  });
  return marks;
}

double TaskScore(const model::Tig& tig, int task, double hd) {
  // MAHEVE eq. (2): Q_i = e_i^hd * d_i^(1-hd).
  return std::pow(tig.cost(task), hd) * std::pow(static_cast<double>(tig.degree(task)), 1 - hd);
}

int ReserveCount(int free_nodes, double reserve) {
  if (free_nodes <= 1 || reserve <= 0) return 0;
  return std::clamp(CeilTolerant(reserve * free_nodes), 1, free_nodes);
}

std::vector<int> TaskList(const model::Tig& tig, double hd) {
  const int v = static_cast<int>(tig.size());
  std::vector<double> q(v);
  for (int i = 0; i < v; ++i) q[i] = TaskScore(tig, i, hd);
  auto before = [&](int a, int b) {
    if (q[a] != q[b]) return q[a] > q[b];
    return tig.id(a) < tig.id(b);
  };
  std::vector<int> by_score(v);
  std::iota(by_score.begin(), by_score.end(), 0);
  std::sort(by_score.begin(), by_score.end(), before);
  // Rank of each task in that order, so neighbour lists sort by integer compare.
  std::vector<int> rank(v);
  for (int r = 0; r < v; ++r) rank[by_score[r]] = r;

  std::vector<int> list;
  list.reserve(v);
  std::vector<bool> listed(v, false);
  std::vector<int> deps;
  for (int task : by_score) {
    if (!listed[task]) {
      listed[task] = true;
      list.push_back(task);
    }
    // Nb_i = ceil(d_i^(1-hd)) dependencies not yet listed, best Q first.
    const int nb = CeilTolerant(std::pow(static_cast<double>(tig.degree(task)), 1 - hd));
    if (nb <= 0) continue;
    deps.clear();
    for (const auto& n : tig.neighbours(task)) {
      if (!listed[n.task]) deps.push_back(rank[n.task]);
    }
    const size_t take = std::min(deps.size(), static_cast<size_t>(nb));
    std::partial_sort(deps.begin(), deps.begin() + static_cast<std::ptrdiff_t>(take), deps.end());
    for (size_t k = 0; k < take; ++k) {
      const int dep = by_score[deps[k]];
      listed[dep] = true;
      list.push_back(dep);
    }
  }
  return list;
}

InitialMapping Maheve::Map(const model::Platform& platform, const model::Tig& tig) const {
  InitialMapping out{0, {}, {}, {}, Placement(platform, tig)};
  Placement& placement = out.placement;
  out.hd = HeterogeneityDegree(platform, placement);
  out.clusters = SortClusters(platform, placement, out.hd);
  out.task_order = TaskList(tig, out.hd);

  // Per cluster in mark order: its free nodes, most powerful first; the last ones are reserved.
  std::vector<std::vector<int>> usable, reserved;
  for (const auto& mark : out.clusters) {
    std::vector<int> nodes = placement.FreeNodes(mark.cluster);
    const int keep = ReserveCount(static_cast<int>(nodes.size()), reserve_);
    reserved.emplace_back(nodes.end() - keep, nodes.end());
    nodes.resize(nodes.size() - keep);
    usable.push_back(std::move(nodes));
  }
  size_t next = 0;
  for (auto* pool : {&usable, &reserved}) {  // reserved nodes only once all others are used
    for (auto& nodes : *pool) {
      for (int& node : nodes) {
        if (next == out.task_order.size()) break;
        placement.Assign(out.task_order[next++], node);
        node = -1;
      }
    }
  }
  AIAC_CHECK(next == out.task_order.size());
  for (const auto& nodes : reserved) {
    for (int node : nodes) {
      if (node >= 0) out.reserved.push_back(node);
    }
  }
  return out;
}

int Maheve::Replace(const model::Platform& platform, const model::Tig& tig,
                    const Placement& placement, int failed, int task) const {
  // Section 4.2: a free node of the same cluster keeps the task's locality...
  const auto same = placement.FreeNodes(platform.nodes()[failed].cluster);
  if (!same.empty()) return same.front();
  // ...else the clusters are sorted again on the current platform and the first with a free
  // node gives its most powerful one.
  const double hd = HeterogeneityDegree(platform, placement);
  for (const auto& mark : SortClusters(platform, placement, hd)) {
    const auto nodes = placement.FreeNodes(mark.cluster);
    if (!nodes.empty()) return nodes.front();
  }
  return -1;
}

}  // namespace aiac::mapping
