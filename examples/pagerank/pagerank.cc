// pagerank: asynchronous PageRank as an aiac app, written against the installed SDK only
// (find_package(aiac)). Kollias, Gallopoulos and Szyld, "Asynchronous iterative computations
// with Web information retrieval structures: the PageRank case" (2006): the ranks are the
// solution of x = d P^T x + (d D(x) + 1 - d) v, where P is the row-stochastic link matrix
// (P_ij = 1 / outdeg(i) for a link i -> j), v = 1/n is the uniform teleportation vector and
// D(x) is the rank held by dangling nodes (no out-links), handed out as the paper does: as if a
// dangling node linked to every node. Task t owns a contiguous range of nodes (the rows of P^T
// it computes), iterates x_i <- d (sum_{j -> i} x_j / outdeg(j) + D / n) + (1 - d) / n on the
// newest values it received, and sends each other task the ranks of its nodes that link into
// that task's rows, with the dangling rank of its own nodes. The map is a contraction of factor
// d in the L1 norm whatever the delays (the paper's section 3), so the asynchronous iterations
// converge.
//
// Parameters: `graph` (a Matrix Market pattern file, entry (i, j) a link i -> j; or an edge
// list, `src dst` per line, 0-based, `#` comments, with `nodes` its node count when the largest
// id is not the last node), or `rmat_scale`, `rmat_edges`, `rmat_seed`
// for a generated R-MAT graph; `damping` (0.85); `tolerance` (a task's L1 change per
// iteration, 1e-10); `residual_tolerance` (||x - d P^T x - (d D + 1 - d) v||_1 of the gathered
// ranks, 1e-8); `output` (the ranks as a Matrix Market array, summing to 1). Self loops are
// dropped and a repeated link counts once (docs/app-api.md, "A second app: PageRank").
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "app/app.h"

namespace {

using aiac::InvalidArgument;
using aiac::Result;
using aiac::Status;
namespace app = aiac::app;

// ---- Parameters ----------------------------------------------------------------------------

struct Params {
  std::string graph;  // path, relative to the job file's folder
  int64_t nodes = 0;  // an edge list's declared node count (0: the largest id + 1)
  int rmat_scale = 0;
  int64_t rmat_edges = 0;
  uint64_t rmat_seed = 1;
  double damping = 0.85;
  double tolerance = 1e-10;
  double residual_tolerance = 1e-8;
  std::string output;
};

template <class T>
Status Number(const app::JobParams& p, const char* key, T& out, double min, double max) {
  const std::string* text = p.Find(key);
  if (!text) return Status::Ok();
  T value{};
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc() || end != text->data() + text->size() || !(value >= min) ||
      !(value <= max)) {
    std::ostringstream range;
    range << min << ".." << max;
    return InvalidArgument(std::string("pagerank: params.") + key + " must be a number in " +
                           range.str() + ", not '" + *text + "'");
  }
  out = value;
  return Status::Ok();
}

Result<Params> ReadParams(const app::JobParams& p) {
  static const char* kKnown[] = {"graph",     "nodes",   "rmat_scale", "rmat_edges",
                                 "rmat_seed", "damping", "tolerance",  "residual_tolerance",
                                 "output"};
  for (const auto& entry : p.values) {
    const std::string& key = entry.first;
    if (std::find_if(std::begin(kKnown), std::end(kKnown),
                     [&](const char* k) { return key == k; }) == std::end(kKnown)) {
      return InvalidArgument("pagerank: unknown parameter params." + key);
    }
  }
  Params out;
  if (const std::string* g = p.Find("graph")) {
    out.graph = g->empty() || g->front() == '/' ? *g : p.base_dir + "/" + *g;
  }
  AIAC_RETURN_IF_ERROR(Number(p, "nodes", out.nodes, 1, 4e9));
  AIAC_RETURN_IF_ERROR(Number(p, "rmat_scale", out.rmat_scale, 1, 30));
  AIAC_RETURN_IF_ERROR(Number(p, "rmat_edges", out.rmat_edges, 1, 4e9));
  AIAC_RETURN_IF_ERROR(Number(p, "rmat_seed", out.rmat_seed, 0, 1e18));
  AIAC_RETURN_IF_ERROR(Number(p, "damping", out.damping, 0.01, 0.99));
  AIAC_RETURN_IF_ERROR(Number(p, "tolerance", out.tolerance, 1e-15, 1));
  AIAC_RETURN_IF_ERROR(Number(p, "residual_tolerance", out.residual_tolerance, 1e-15, 1));
  if (const std::string* o = p.Find("output")) {
    out.output = o->empty() || o->front() == '/' ? *o : p.base_dir + "/" + *o;
  }
  if (out.graph.empty() == (out.rmat_scale == 0)) {
    return InvalidArgument("pagerank: give either params.graph or params.rmat_scale");
  }
  if (out.rmat_scale > 0 && out.rmat_edges == 0) out.rmat_edges = int64_t{16} << out.rmat_scale;
  return out;
}

// ---- The graph -----------------------------------------------------------------------------

struct Graph {
  int64_t n = 0;
  std::vector<std::pair<int64_t, int64_t>> links;  // (src, dst), no self loop, no repeat
};

// Sorts and drops self loops and repeated links.
void Clean(Graph& g) {
  auto& l = g.links;
  l.erase(std::remove_if(l.begin(), l.end(), [](const auto& e) { return e.first == e.second; }),
          l.end());
  std::sort(l.begin(), l.end());
  l.erase(std::unique(l.begin(), l.end()), l.end());
}

// R-MAT (Chakrabarti, Zhan and Faloutsos, 2004) with probabilities 0.57, 0.19, 0.19, 0.05:
// each link picks one quadrant per level; deterministic for a seed.
Graph Rmat(int scale, int64_t edges, uint64_t seed) {
  Graph g;
  g.n = int64_t{1} << scale;
  uint64_t state = seed * 0x9e3779b97f4a7c15ull + 1;
  auto next = [&state] {  // splitmix64
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return static_cast<double>((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
  };
  g.links.reserve(static_cast<size_t>(edges));
  for (int64_t e = 0; e < edges; ++e) {
    int64_t src = 0, dst = 0;
    for (int level = 0; level < scale; ++level) {
      const double r = next();
      const int quadrant = r < 0.57 ? 0 : r < 0.76 ? 1 : r < 0.95 ? 2 : 3;
      src = src * 2 + (quadrant >> 1);
      dst = dst * 2 + (quadrant & 1);
    }
    g.links.emplace_back(src, dst);
  }
  Clean(g);
  return g;
}

Result<int64_t> NodeId(std::string_view token, const std::string& where) {
  int64_t id = -1;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), id);
  if (ec != std::errc() || end != token.data() + token.size() || id < 0) {
    return InvalidArgument(where + ": '" + std::string(token) + "' is not a node id");
  }
  return id;
}

// The whitespace-separated fields of a line.
std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    const size_t start = i;
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

// `nodes` > 0: an edge list's declared node count.
Result<Graph> ReadGraph(const std::string& path, int64_t nodes) {
  std::ifstream in(path);
  if (!in) return InvalidArgument("pagerank: cannot read params.graph " + path);
  Graph g;
  std::string line;
  int64_t number = 0;
  bool matrix_market = false, symmetric = false, header_read = false;
  int64_t declared_links = -1;
  while (std::getline(in, line)) {
    ++number;
    const std::string where = path + ":" + std::to_string(number);
    if (number == 1 && line.rfind("%%MatrixMarket", 0) == 0) {
      matrix_market = true;
      if (line.find("coordinate") == std::string::npos) {
        return InvalidArgument(where + ": a graph is a coordinate matrix, not an array");
      }
      symmetric = line.find("symmetric") != std::string::npos;
      continue;
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto fields = Fields(line);
    if (fields.empty() || fields[0].front() == '#' || fields[0].front() == '%') continue;
    if (matrix_market && !header_read) {
      if (fields.size() != 3) return InvalidArgument(where + ": expected 'rows cols entries'");
      AIAC_ASSIGN_OR_RETURN(const int64_t rows, NodeId(fields[0], where));
      AIAC_ASSIGN_OR_RETURN(const int64_t cols, NodeId(fields[1], where));
      AIAC_ASSIGN_OR_RETURN(declared_links, NodeId(fields[2], where));
      if (rows != cols) return InvalidArgument(where + ": a link matrix is square");
      g.n = rows;
      header_read = true;
      continue;
    }
    if (fields.size() < 2 || (!matrix_market && fields.size() > 2)) {
      return InvalidArgument(where + ": expected '" + (matrix_market ? "i j" : "src dst") + "'");
    }
    AIAC_ASSIGN_OR_RETURN(int64_t src, NodeId(fields[0], where));
    AIAC_ASSIGN_OR_RETURN(int64_t dst, NodeId(fields[1], where));
    if (matrix_market) {
      if (src < 1 || dst < 1 || src > g.n || dst > g.n) {
        return InvalidArgument(where + ": entry (" + std::string(fields[0]) + ", " +
                               std::string(fields[1]) + ") is outside the " + std::to_string(g.n) +
                               " x " + std::to_string(g.n) + " matrix");
      }
      --src;
      --dst;
      if (symmetric) g.links.emplace_back(dst, src);
    } else if (nodes > 0 && (src >= nodes || dst >= nodes)) {
      return InvalidArgument(where + ": node " + std::to_string(std::max(src, dst)) +
                             " is beyond params.nodes = " + std::to_string(nodes) +
                             " (ids are 0-based)");
    } else {
      g.n = std::max(g.n, std::max(src, dst) + 1);
    }
    g.links.emplace_back(src, dst);
  }
  if (in.bad()) return InvalidArgument("pagerank: error reading " + path);
  if (matrix_market && !header_read) return InvalidArgument(path + ": no size line");
  if (!matrix_market && nodes > 0) g.n = nodes;
  if (matrix_market && !symmetric && declared_links >= 0 &&
      static_cast<int64_t>(g.links.size()) != declared_links) {
    return InvalidArgument(path + ": " + std::to_string(g.links.size()) +
                           " entries, the header says " + std::to_string(declared_links));
  }
  if (g.n == 0) return InvalidArgument("pagerank: " + path + " holds no node");
  Clean(g);
  return g;
}

// ---- Bytes -------------------------------------------------------------------------------

class Writer {
 public:
  template <class T>
  void Put(const T& v) {
    bytes_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  template <class T>
  void PutVector(const std::vector<T>& v) {
    Put<uint64_t>(v.size());
    if (!v.empty()) bytes_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  std::string Take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  template <class T>
  bool Get(T& v) {
    if (bytes_.size() < sizeof v) return false;
    std::memcpy(&v, bytes_.data(), sizeof v);
    bytes_.remove_prefix(sizeof v);
    return true;
  }
  template <class T>
  bool GetVector(std::vector<T>& v, uint64_t most) {
    uint64_t size = 0;
    if (!Get(size) || size > most || bytes_.size() < size * sizeof(T)) return false;
    v.resize(size);
    if (size > 0) std::memcpy(v.data(), bytes_.data(), size * sizeof(T));  // data() may be null
    bytes_.remove_prefix(size * sizeof(T));
    return true;
  }
  bool done() const { return bytes_.empty(); }

 private:
  std::string_view bytes_;
};

// ---- A task's slice ------------------------------------------------------------------------

// What task t needs: its rows [lo, hi) of P^T in CSR (columns are global node ids, with the
// weight 1 / outdeg of each), which of its nodes are dangling, and, per other task, which of its
// own nodes that task needs (in the order that task expects them).
struct Slice {
  int64_t n = 0, lo = 0, hi = 0;
  uint32_t tasks = 0;
  std::vector<int64_t> starts;             // every task's first node, then n: who owns what
  std::vector<int64_t> row_start;          // hi - lo + 1
  std::vector<int64_t> cols;               // global source ids
  std::vector<double> weights;             // 1 / outdeg(source)
  std::vector<int64_t> dangling;           // own nodes with no out-link
  std::vector<std::vector<int64_t>> send;  // per task: own node ids it needs, ascending

  std::string Encode() const {
    Writer w;
    w.Put(n);
    w.Put(lo);
    w.Put(hi);
    w.Put(tasks);
    w.PutVector(starts);
    w.PutVector(row_start);
    w.PutVector(cols);
    w.PutVector(weights);
    w.PutVector(dangling);
    for (const auto& s : send) w.PutVector(s);
    return w.Take();
  }
  static Result<Slice> Decode(std::string_view bytes) {
    Slice s;
    Reader r(bytes);
    const uint64_t most = bytes.size();
    bool ok = r.Get(s.n) && r.Get(s.lo) && r.Get(s.hi) && r.Get(s.tasks) && s.tasks <= 1u << 20 &&
              r.GetVector(s.starts, most) && r.GetVector(s.row_start, most) &&
              r.GetVector(s.cols, most) && r.GetVector(s.weights, most) &&
              r.GetVector(s.dangling, most);
    s.send.resize(ok ? s.tasks : 0);
    for (auto& v : s.send) ok = ok && r.GetVector(v, most);
    if (!ok || !r.done() || s.lo < 0 || s.hi < s.lo || s.hi > s.n ||
        s.starts.size() != s.tasks + size_t{1} ||
        !std::is_sorted(s.starts.begin(), s.starts.end()) || s.starts.front() != 0 ||
        s.starts.back() != s.n || s.row_start.size() != static_cast<size_t>(s.hi - s.lo + 1) ||
        s.cols.size() != s.weights.size() ||
        s.row_start.back() != static_cast<int64_t>(s.cols.size())) {
      return InvalidArgument("pagerank: a task's slice is damaged");
    }
    for (int64_t j : s.cols) {
      if (j < 0 || j >= s.n) return InvalidArgument("pagerank: a task's slice is damaged");
    }
    for (const auto& v : s.send) {
      for (int64_t j : v) {
        if (j < s.lo || j >= s.hi) return InvalidArgument("pagerank: a task's slice is damaged");
      }
    }
    for (int64_t j : s.dangling) {
      if (j < s.lo || j >= s.hi) return InvalidArgument("pagerank: a task's slice is damaged");
    }
    return s;
  }
};

// Node ranges: contiguous, balanced by links plus nodes.
std::vector<int64_t> Split(const Graph& g, const std::vector<int64_t>& indegree, uint32_t tasks) {
  const double total = static_cast<double>(g.links.size() + static_cast<size_t>(g.n));
  std::vector<int64_t> starts{0};
  double done = 0;
  for (int64_t i = 0; i < g.n && starts.size() < tasks; ++i) {
    done += static_cast<double>(indegree[i] + 1);
    if (done >= total * static_cast<double>(starts.size()) / tasks &&
        g.n - (i + 1) >= static_cast<int64_t>(tasks - starts.size())) {
      starts.push_back(i + 1);
    }
  }
  while (starts.size() < tasks) starts.push_back(g.n - static_cast<int64_t>(tasks - starts.size()));
  starts.push_back(g.n);
  return starts;
}

uint32_t Owner(const std::vector<int64_t>& starts, int64_t node) {
  return static_cast<uint32_t>(std::upper_bound(starts.begin(), starts.end(), node) -
                               starts.begin() - 1);
}

// ---- One task ------------------------------------------------------------------------------

class PageRankTask final : public app::Task {
 public:
  PageRankTask(Slice s, uint32_t t, const Params& p)
      : s_(std::move(s)), t_(t), d_(p.damping), tolerance_(p.tolerance) {
    const auto own = static_cast<size_t>(s_.hi - s_.lo);
    x_.assign(own, 1.0 / static_cast<double>(s_.n));
    next_.resize(own);
    dangling_of_.assign(s_.tasks, 0.0);
    // What each other task sends: its own nodes this task's rows use, ascending; they land in
    // ghost_[k] at the index of their node among them.
    std::vector<std::vector<int64_t>> from(s_.tasks);
    for (int64_t j : s_.cols) {
      if (j < s_.lo || j >= s_.hi) from[OwnerOf(j)].push_back(j);
    }
    ghost_ids_.resize(s_.tasks);
    ghost_.resize(s_.tasks);
    for (uint32_t k = 0; k < s_.tasks; ++k) {
      auto& ids = from[k];
      std::sort(ids.begin(), ids.end());
      ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
      ghost_ids_[k] = ids;
      ghost_[k].assign(ids.size(), 1.0 / static_cast<double>(s_.n));
      // Every other task starts as if its nodes held 1/n each: its dangling rank too.
    }
    // Columns as (owner, index) pairs, resolved once.
    where_.reserve(s_.cols.size());
    for (int64_t j : s_.cols) {
      if (j >= s_.lo && j < s_.hi) {
        where_.push_back({t_, static_cast<uint64_t>(j - s_.lo)});
      } else {
        const uint32_t k = OwnerOf(j);
        const auto& ids = ghost_ids_[k];
        where_.push_back(
            {k, static_cast<uint64_t>(std::lower_bound(ids.begin(), ids.end(), j) - ids.begin())});
      }
    }
  }

  std::vector<uint32_t> Dependencies() const override {
    std::vector<uint32_t> d;
    for (uint32_t k = 0; k < s_.tasks; ++k) {
      if (k != t_) d.push_back(k);  // every task: the dangling rank is everyone's
    }
    return d;
  }

  Status Absorb(uint32_t from, std::string_view bytes) override {
    if (from >= s_.tasks || from == t_) return InvalidArgument("pagerank: value from a stranger");
    Reader r(bytes);
    double dangling = 0;
    std::vector<double> values;
    if (!r.Get(dangling) || !r.GetVector(values, bytes.size()) || !r.done() ||
        values.size() != ghost_[from].size()) {
      return InvalidArgument("pagerank: a neighbour's value is damaged");
    }
    dangling_of_[from] = dangling;
    ghost_[from] = std::move(values);
    fresh_ = true;
    return Status::Ok();
  }

  Result<bool> Iterate() override {
    if (converged() && !fresh_ && iterations_ > 0) return false;
    fresh_ = false;
    const double n = static_cast<double>(s_.n);
    double dangling = OwnDangling();
    for (uint32_t k = 0; k < s_.tasks; ++k) {
      if (k != t_) dangling += dangling_of_[k];
    }
    const double base = d_ * dangling / n + (1 - d_) / n;
    change_ = 0;
    for (size_t i = 0; i + 1 < s_.row_start.size(); ++i) {
      double sum = 0;
      for (int64_t e = s_.row_start[i]; e < s_.row_start[i + 1]; ++e) {
        const auto [k, at] = where_[static_cast<size_t>(e)];
        sum += (k == t_ ? x_[at] : ghost_[k][at]) * s_.weights[static_cast<size_t>(e)];
      }
      next_[i] = d_ * sum + base;
      change_ += std::abs(next_[i] - x_[i]);
    }
    x_.swap(next_);
    ++iterations_;
    if (!std::isfinite(change_)) return aiac::Diverged("pagerank: the ranks are not finite");
    return true;
  }

  std::vector<app::Outgoing> TakeOutgoing() override {
    std::vector<app::Outgoing> out;
    const double dangling = OwnDangling();
    std::vector<double> values;
    for (uint32_t k = 0; k < s_.tasks; ++k) {
      if (k == t_) continue;
      values.clear();
      for (int64_t j : s_.send[k]) values.push_back(x_[static_cast<size_t>(j - s_.lo)]);
      Writer w;
      w.Put(dangling);
      w.PutVector(values);
      out.push_back({k, w.Take()});
    }
    return out;
  }

  double LocalChange() const override { return change_; }
  bool LocallyConverged() const override { return converged(); }

  // The task's ranks and the newest it had from the others: a restored task goes on from there
  // even if its neighbours, converged, send nothing new for a while.
  std::string SaveState() const override {
    Writer w;
    w.PutVector(x_);
    w.PutVector(dangling_of_);
    for (const auto& g : ghost_) w.PutVector(g);
    return w.Take();
  }
  Status RestoreState(std::string_view state) override {
    Reader r(state);
    std::vector<double> x, dangling;
    std::vector<std::vector<double>> ghost(ghost_.size());
    bool ok = r.GetVector(x, state.size()) && x.size() == x_.size() &&
              r.GetVector(dangling, state.size()) && dangling.size() == dangling_of_.size();
    for (size_t k = 0; ok && k < ghost.size(); ++k) {
      ok = r.GetVector(ghost[k], state.size()) && ghost[k].size() == ghost_[k].size();
    }
    if (!ok || !r.done()) return aiac::Corruption("pagerank: a checkpoint of another split");
    x_ = std::move(x);
    dangling_of_ = std::move(dangling);
    ghost_ = std::move(ghost);
    change_ = INFINITY;
    return Status::Ok();
  }

  std::string ResultSlice() const override {
    Writer w;
    w.PutVector(x_);
    return w.Take();
  }

  Status Tighten(double factor) override {
    if (tolerance_ / factor < 1e-15) {
      return InvalidArgument("pagerank: the tolerance would go below what doubles can tell");
    }
    tolerance_ /= factor;
    change_ = INFINITY;
    return Status::Ok();
  }

 private:
  bool converged() const { return change_ < tolerance_; }
  uint32_t OwnerOf(int64_t node) const { return Owner(s_.starts, node); }
  double OwnDangling() const {
    double sum = 0;
    for (int64_t j : s_.dangling) sum += x_[static_cast<size_t>(j - s_.lo)];
    return sum;
  }

  Slice s_;
  uint32_t t_;
  double d_, tolerance_;
  std::vector<double> x_, next_, dangling_of_;
  std::vector<std::vector<int64_t>> ghost_ids_;
  std::vector<std::vector<double>> ghost_;
  std::vector<std::pair<uint32_t, uint64_t>> where_;
  double change_ = INFINITY;
  uint64_t iterations_ = 0;
  bool fresh_ = true;
};

// ---- The app --------------------------------------------------------------------------------

class PageRankApp final : public app::App {
 public:
  std::string_view name() const override { return "pagerank"; }

  Result<app::JobPlan> Prepare(const app::JobParams& params) override {
    AIAC_ASSIGN_OR_RETURN(params_, ReadParams(params));
    if (params_.rmat_scale > 0) {
      graph_ = Rmat(params_.rmat_scale, params_.rmat_edges, params_.rmat_seed);
    } else {
      AIAC_ASSIGN_OR_RETURN(graph_, ReadGraph(params_.graph, params_.nodes));
    }
    const uint32_t tasks = params.tasks;
    if (graph_.n < tasks) {
      return InvalidArgument("pagerank: " + std::to_string(graph_.n) + " nodes for " +
                             std::to_string(tasks) + " tasks");
    }
    outdeg_.assign(static_cast<size_t>(graph_.n), 0);
    std::vector<int64_t> indeg(static_cast<size_t>(graph_.n), 0);
    for (const auto& [src, dst] : graph_.links) {
      ++outdeg_[static_cast<size_t>(src)];
      ++indeg[static_cast<size_t>(dst)];
    }
    starts_ = Split(graph_, indeg, tasks);
    // Links by destination: the rows of P^T.
    std::vector<std::pair<int64_t, int64_t>> by_dst;
    by_dst.reserve(graph_.links.size());
    for (const auto& [src, dst] : graph_.links) by_dst.emplace_back(dst, src);
    std::sort(by_dst.begin(), by_dst.end());
    // needs[a][b]: the nodes of task a that task b's rows use.
    std::vector<std::vector<std::vector<int64_t>>> needs(tasks,
                                                         std::vector<std::vector<int64_t>>(tasks));
    for (const auto& [dst, src] : by_dst) {
      const uint32_t a = Owner(starts_, src), b = Owner(starts_, dst);
      if (a != b) needs[a][b].push_back(src);
    }
    app::JobPlan plan;
    size_t e = 0;
    for (uint32_t t = 0; t < tasks; ++t) {
      Slice s;
      s.n = graph_.n;
      s.lo = starts_[t];
      s.hi = starts_[t + 1];
      s.tasks = tasks;
      s.starts = starts_;
      s.row_start.push_back(0);
      for (int64_t i = s.lo; i < s.hi; ++i) {
        for (; e < by_dst.size() && by_dst[e].first == i; ++e) {
          s.cols.push_back(by_dst[e].second);
          s.weights.push_back(1.0 /
                              static_cast<double>(outdeg_[static_cast<size_t>(by_dst[e].second)]));
        }
        s.row_start.push_back(static_cast<int64_t>(s.cols.size()));
        if (outdeg_[static_cast<size_t>(i)] == 0) s.dangling.push_back(i);
      }
      s.send.resize(tasks);
      app::TaskNode node;
      node.cost = static_cast<double>(s.cols.size() + static_cast<size_t>(s.hi - s.lo));
      for (uint32_t k = 0; k < tasks; ++k) {
        auto& v = needs[t][k];
        std::sort(v.begin(), v.end());
        v.erase(std::unique(v.begin(), v.end()), v.end());
        s.send[k] = std::move(v);
        if (k != t) node.edges.push_back({k, 16.0 + 8.0 * static_cast<double>(s.send[k].size())});
      }
      plan.graph.push_back(std::move(node));
      plan.slices.push_back(s.Encode());
    }
    plan.target_change = params_.tolerance;
    plan.notes.push_back("pagerank: " + std::to_string(graph_.n) + " nodes, " +
                         std::to_string(graph_.links.size()) +
                         " links (self loops and repeats dropped)");
    return plan;
  }

  Result<std::unique_ptr<app::Task>> MakeTask(const app::JobParams& params, uint32_t task,
                                              std::string_view slice) override {
    AIAC_ASSIGN_OR_RETURN(const Params p, ReadParams(params));
    AIAC_ASSIGN_OR_RETURN(Slice s, Slice::Decode(slice));
    if (s.tasks != params.tasks || task >= s.tasks || s.lo != s.starts[task] ||
        s.hi != s.starts[task + 1]) {
      return InvalidArgument("pagerank: the slice is not task " + std::to_string(task) + "'s");
    }
    return std::unique_ptr<app::Task>(new PageRankTask(std::move(s), task, p));
  }

  Result<app::GatherReport> Gather(const app::JobParams& params,
                                   const std::vector<std::string>& slices) override {
    std::vector<double> x;
    x.reserve(static_cast<size_t>(graph_.n));
    for (const std::string& slice : slices) {
      Reader r(slice);
      std::vector<double> part;
      if (!r.GetVector(part, slice.size()) || !r.done()) {
        return InvalidArgument("pagerank: a result slice is damaged");
      }
      x.insert(x.end(), part.begin(), part.end());
    }
    if (static_cast<int64_t>(x.size()) != graph_.n) {
      return InvalidArgument("pagerank: the result slices hold " + std::to_string(x.size()) +
                             " ranks, not " + std::to_string(graph_.n));
    }
    // The residual of the fixed-point equation, ||x - d P^T x - (d D + 1 - d) v||_1.
    const double n = static_cast<double>(graph_.n), d = params_.damping;
    double dangling = 0, sum = 0;
    for (int64_t i = 0; i < graph_.n; ++i) {
      sum += x[static_cast<size_t>(i)];
      if (outdeg_[static_cast<size_t>(i)] == 0) dangling += x[static_cast<size_t>(i)];
    }
    std::vector<double> y(x.size(), d * dangling / n + (1 - d) / n);
    for (const auto& [src, dst] : graph_.links) {
      y[static_cast<size_t>(dst)] +=
          d * x[static_cast<size_t>(src)] / static_cast<double>(outdeg_[static_cast<size_t>(src)]);
    }
    double residual = 0;
    for (size_t i = 0; i < x.size(); ++i) residual += std::abs(x[i] - y[i]);
    app::GatherReport report;
    report.residual = residual;
    report.residual_target = params_.residual_tolerance;
    report.numbers["sum"] = sum;
    if (!std::isfinite(residual) || !(sum > 0)) {
      report.status = app::GatherStatus::kDiverged;
      report.error = "pagerank: the ranks are not finite";
      return report;
    }
    if (residual > params_.residual_tolerance) {
      report.status = app::GatherStatus::kUnconverged;
      std::ostringstream why;
      why << "pagerank: the residual " << residual << " is above residual_tolerance "
          << params_.residual_tolerance;
      report.error = why.str();
    }
    // The 20 highest ranks, ties by node id.
    std::vector<int64_t> order(x.size());
    std::iota(order.begin(), order.end(), 0);
    const size_t top = std::min<size_t>(20, order.size());
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(top), order.end(),
                      [&](int64_t a, int64_t b) {
                        return x[static_cast<size_t>(a)] != x[static_cast<size_t>(b)]
                                   ? x[static_cast<size_t>(a)] > x[static_cast<size_t>(b)]
                                   : a < b;
                      });
    report.numbers["top_node"] = static_cast<double>(order[0]);
    if (report.status == app::GatherStatus::kConverged && params.logger) {
      std::ostringstream line;
      line << "pagerank: top " << top << " nodes:";
      for (size_t k = 0; k < top; ++k) {
        line << (k ? ", " : " ") << order[k] << " (" << x[static_cast<size_t>(order[k])] / sum
             << ")";
      }
      params.logger->Info(line.str());
    }
    if (!params_.output.empty()) {
      std::ofstream out(params_.output);
      out << "%%MatrixMarket matrix array real general\n% PageRank, damping " << d << ", residual "
          << residual << "\n"
          << graph_.n << " 1\n";
      char buffer[32];
      for (double v : x) {
        std::snprintf(buffer, sizeof buffer, "%.17g\n", v / sum);
        out << buffer;
      }
      if (!out) return InvalidArgument("pagerank: cannot write params.output " + params_.output);
      report.output = params_.output;
    }
    return report;
  }

 private:
  Params params_;
  Graph graph_;
  std::vector<int64_t> outdeg_, starts_;
};

}  // namespace

AIAC_DEFINE_APP(PageRankApp)
