// An independent check of the pagerank example (examples/pagerank): its own R-MAT generator and
// its own power iteration, sharing no code with the app.
//
//   pagerank_check rmat NODES EDGES SEED OUT     an edge list (src dst, 0-based) of an R-MAT graph
//   pagerank_check compare GRAPH RANKS DAMPING [NODES]
//                                                the ranks against a power iteration on GRAPH
//                                                (of NODES nodes): the same top 20 in the same
//                                                order, and an L1 distance below 1e-6; exit 0
//                                                when they agree
//   pagerank_check power GRAPH DAMPING           times the power iteration alone (for the bench)
//
// Same treatment of the graph as the app's documentation says: self loops dropped, repeated
// links counted once, dangling nodes' rank spread uniformly.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Links {
  int64_t n = 0;
  std::vector<std::pair<int64_t, int64_t>> edges;
};

Links ReadEdgeList(const char* path, int64_t nodes = 0) {
  Links g;
  g.n = nodes;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    int64_t s = 0, d = 0;
    if (!(fields >> s >> d)) continue;
    g.n = std::max(g.n, std::max(s, d) + 1);
    if (s != d) g.edges.emplace_back(s, d);
  }
  std::sort(g.edges.begin(), g.edges.end());
  g.edges.erase(std::unique(g.edges.begin(), g.edges.end()), g.edges.end());
  return g;
}

// Power iteration x <- d P^T x + (d D + 1 - d) / n until the L1 change is below 1e-15 x n.
std::vector<double> Power(const Links& g, double damping, int& iterations) {
  const auto n = static_cast<size_t>(g.n);
  std::vector<int64_t> out(n, 0);
  for (const auto& [s, d] : g.edges) ++out[static_cast<size_t>(s)];
  std::vector<double> x(n, 1.0 / static_cast<double>(n)), y(n);
  for (iterations = 1; iterations < 10000; ++iterations) {
    double dangling = 0;
    for (size_t i = 0; i < n; ++i) {
      if (out[i] == 0) dangling += x[i];
    }
    std::fill(y.begin(), y.end(), (damping * dangling + 1 - damping) / static_cast<double>(n));
    for (const auto& [s, d] : g.edges) {
      y[static_cast<size_t>(d)] +=
          damping * x[static_cast<size_t>(s)] / static_cast<double>(out[static_cast<size_t>(s)]);
    }
    double change = 0;
    for (size_t i = 0; i < n; ++i) change += std::abs(y[i] - x[i]);
    x.swap(y);
    if (change < 1e-15 * static_cast<double>(n)) break;
  }
  const double sum = std::accumulate(x.begin(), x.end(), 0.0);
  for (double& v : x) v /= sum;
  return x;
}

std::vector<double> ReadRanks(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::vector<double> x;
  bool size_read = false;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '%') continue;
    if (!size_read) {
      size_read = true;
      continue;
    }
    x.push_back(std::strtod(line.c_str(), nullptr));
  }
  return x;
}

std::vector<int64_t> Top(const std::vector<double>& x, size_t k) {
  std::vector<int64_t> order(x.size());
  std::iota(order.begin(), order.end(), 0);
  k = std::min(k, order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(),
                    [&](int64_t a, int64_t b) {
                      return x[static_cast<size_t>(a)] != x[static_cast<size_t>(b)]
                                 ? x[static_cast<size_t>(a)] > x[static_cast<size_t>(b)]
                                 : a < b;
                    });
  order.resize(k);
  return order;
}

int Rmat(int64_t nodes, int64_t edges, uint64_t seed, const char* out_path) {
  int scale = 1;
  while ((int64_t{1} << scale) < nodes) ++scale;
  std::FILE* out = std::fopen(out_path, "w");
  if (!out) return 2;
  std::fprintf(out, "# R-MAT (0.57, 0.19, 0.19, 0.05), %lld nodes, %lld edges, seed %llu\n",
               static_cast<long long>(nodes), static_cast<long long>(edges),
               static_cast<unsigned long long>(seed));
  uint64_t state = seed;
  auto uniform = [&state] {  // xorshift64*
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return static_cast<double>((state * 2685821657736338717ull) >> 11) * 0x1.0p-53;
  };
  if (state == 0) state = 88172645463325252ull;
  for (int64_t e = 0; e < edges; ++e) {
    int64_t s = 0, d = 0;
    for (int level = 0; level < scale; ++level) {
      const double r = uniform();
      s = 2 * s + (r >= 0.76 ? 1 : 0);
      d = 2 * d + ((r >= 0.57 && r < 0.76) || r >= 0.95 ? 1 : 0);
    }
    std::fprintf(out, "%lld %lld\n", static_cast<long long>(s % nodes),
                 static_cast<long long>(d % nodes));
  }
  return std::fclose(out) == 0 ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string command = argc > 1 ? argv[1] : "";
  if (command == "rmat" && argc == 6) {
    return Rmat(std::atoll(argv[2]), std::atoll(argv[3]), std::strtoull(argv[4], nullptr, 10),
                argv[5]);
  }
  if (command == "power" && argc == 4) {
    const Links g = ReadEdgeList(argv[2]);
    const auto start = std::chrono::steady_clock::now();
    int iterations = 0;
    Power(g, std::atof(argv[3]), iterations);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("power iteration: %lld nodes, %zu links, %d iterations, %.3f s\n",
                static_cast<long long>(g.n), g.edges.size(), iterations, seconds);
    return 0;
  }
  if (command == "compare" && (argc == 5 || argc == 6)) {
    const Links g = ReadEdgeList(argv[2], argc == 6 ? std::atoll(argv[5]) : 0);
    int iterations = 0;
    const std::vector<double> exact = Power(g, std::atof(argv[4]), iterations);
    const std::vector<double> x = ReadRanks(argv[3]);
    if (x.size() != exact.size()) {
      std::fprintf(stderr, "pagerank_check: %zu ranks, the graph has %zu nodes\n", x.size(),
                   exact.size());
      return 1;
    }
    double distance = 0;
    for (size_t i = 0; i < x.size(); ++i) distance += std::abs(x[i] - exact[i]);
    const bool same_top = Top(x, 20) == Top(exact, 20);
    std::printf(
        "pagerank_check: %zu nodes, L1 distance %.3g to the power iteration (%d "
        "iterations), top 20 %s\n",
        x.size(), distance, iterations, same_top ? "in the same order" : "DIFFERENT");
    return distance < 1e-6 && same_top ? 0 : 1;
  }
  std::fprintf(
      stderr,
      "usage: pagerank_check rmat NODES EDGES SEED OUT | compare GRAPH RANKS DAMPING [NODES] | "
      "power GRAPH DAMPING\n");
  return 2;
}
