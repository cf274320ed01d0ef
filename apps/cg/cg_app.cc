#include "apps/cg/cg_app.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "apps/cg/block_cg.h"
#include "apps/cg/block_outline.h"
#include "apps/cg/block_direct.h"
#include "apps/cg/matrix_cache.h"
#include "apps/cg/matrix_market.h"
#include "apps/cg/partition.h"
#include "core/memory_budget.h"

namespace aiac::cg {
namespace {

std::string Resolve(const std::string& base, const std::string& path) {
  if (path.empty() || path[0] == '/' || base.empty()) return path;
  return base + "/" + path;
}

Result<double> ParseDouble(const std::string& key, const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v)) {
    return InvalidArgument("cg: params." + key + " must be a number, not '" + text + "'");
  }
  return v;
}

Result<int64_t> ParseInt(const std::string& key, const std::string& text) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return InvalidArgument("cg: params." + key + " must be an integer, not '" + text + "'");
  }
  return v;
}

// "1.2e-05": short enough for one-line messages.
std::string FormatDouble(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string PackDoubles(const double* v, size_t n) { return std::string(reinterpret_cast<const char*>(v), n * sizeof(double)); }

// TIG of the plan: e_l = nonzeros of block l; neighbours = blocks it uses or that use it;
// c_lm = entries exchanged both ways. `in`: a Block's couplings or an outline's inputs.
template <typename Inputs>
app::TaskNode NodeOf(int64_t nonzeros, const Inputs& in, const std::vector<Block::Send>& out) {
  std::map<uint32_t, double> volume;
  for (const auto& c : in) volume[c.task] += static_cast<double>(c.cols.size());
  for (const auto& s : out) volume[s.task] += static_cast<double>(s.rows.size());
  app::TaskNode node;
  node.cost = static_cast<double>(std::max<int64_t>(1, nonzeros));
  for (const auto& [m, v] : volume) node.edges.push_back({m, v});
  return node;
}

class CgTask final : public app::Task {
 public:
  // Builds the block's solver; the factor, when there is one, is computed here, once.
  static Result<std::unique_ptr<CgTask>> Make(Block block, const CgParams& params) {
    std::unique_ptr<CgTask> t(new CgTask(std::move(block), params));
    if (params.inner != "cg") {
      auto direct = BlockDirect::Factor(t->b_.local, t->solver_.symmetric());
      if (direct.ok()) {
        t->direct_ = std::move(*direct);
      } else if (params.inner == "direct") {
        return InvalidArgument("cg: block of " + t->b_.Describe() + " cannot be factored (inner = \"direct\"): " +
                               direct.status().message());
      }
    }
    return t;
  }

  CgTask(Block block, const CgParams& params)
      : b_(std::move(block)),
        p_(params),
        tolerance_(params.tolerance),
        inner_tolerance_(params.inner_tolerance),
        solver_(b_.local),
        x_(Eigen::VectorXd::Zero(b_.size())),
        rhs_(b_.size()) {
    for (size_t k = 0; k < b_.in.size(); ++k) {
      index_[b_.in[k].task] = k;
      xin_.push_back(Eigen::VectorXd::Zero(static_cast<Eigen::Index>(b_.in[k].cols.size())));
    }
  }

  std::vector<uint32_t> Dependencies() const override {
    std::vector<uint32_t> out;
    for (const auto& c : b_.in) out.push_back(c.task);
    return out;
  }

  Status Absorb(uint32_t from, std::string_view bytes) override {
    auto it = index_.find(from);
    // A value from a task we do not depend on, or of the wrong size, is not ours: ignore it.
    if (it == index_.end() || bytes.size() != static_cast<size_t>(xin_[it->second].size()) * sizeof(double)) {
      return Status::Ok();
    }
    std::memcpy(xin_[it->second].data(), bytes.data(), bytes.size());
    fresh_ = true;
    return Status::Ok();
  }

  Result<bool> Iterate() override {
    if (!fresh_ && iterations_ > 0) {
      // No new input: x_l already solves the block for these inputs, so the iteration would
      // change nothing. When those inputs are final (their senders are converged), count it as
      // such (change 0) until stable_iterations is reached: a block whose inputs stopped
      // changing (one-way dependencies) still reaches local convergence instead of waiting for
      // input that never comes. Otherwise wait for new values.
      if (!inputs_final_ || stable_ >= p_.stable_iterations) return false;
      ++stable_;
      change_ = 0;
      ++iterations_;
      return true;
    }
    fresh_ = false;
    // Multisplitting step: A_ll x_l = b_l - sum_{m != l} A_lm x_m.
    rhs_ = b_.b;
    for (size_t k = 0; k < b_.in.size(); ++k) rhs_.noalias() -= b_.in[k].a * xin_[k];
    Eigen::VectorXd old = x_;
    const std::string breakdown = direct_ ? direct_->Solve(rhs_, x_, false).breakdown
                                          : solver_.Solve(rhs_, x_, inner_tolerance_, std::max(100, 10 * b_.size())).breakdown;
    if (!breakdown.empty()) {
      x_ = old;  // keep the last good iterate: it is what a checkpoint or a snapshot should hold
      return InvalidArgument("inner solver breakdown in the block of " + b_.Describe() + ": " + breakdown);
    }
    const double moved = b_.size() > 0 ? (x_ - old).cwiseAbs().maxCoeff() : 0.0;
    ++iterations_;
    if (!std::isfinite(moved) || moved > 1e100) {
      return InvalidArgument("diverged: block of " + b_.Describe() + " grew without bound");
    }
    // The local test is relative to the block's own scale, so a system whose solution is tiny
    // (or huge) is judged like any other.
    const double scale = b_.size() > 0 ? x_.cwiseAbs().maxCoeff() : 0.0;
    change_ = scale > 0 ? moved / scale : moved;
    // A block that depends on no other is solved exactly by its first iteration.
    stable_ = (change_ < tolerance_ || b_.in.empty()) ? stable_ + 1 : 0;
    if (b_.in.empty()) stable_ = std::max(stable_, p_.stable_iterations);
    return true;
  }

  std::vector<app::Outgoing> TakeOutgoing() override {
    std::vector<app::Outgoing> out;
    std::vector<double> values;
    for (const auto& s : b_.out) {
      values.resize(s.rows.size());
      for (size_t k = 0; k < s.rows.size(); ++k) values[k] = x_[s.rows[k]];
      out.push_back({s.task, PackDoubles(values.data(), values.size())});
    }
    return out;
  }

  double LocalChange() const override { return change_; }

  Status Tighten(double factor) override {
    if (!(factor > 1) || !std::isfinite(factor)) return InvalidArgument("cg: a tightening factor must be above 1");
    if (tolerance_ <= kFinestTolerance) {
      return InvalidArgument("cg: the residual stagnates: the local test is at its finest already (" +
                             FormatDouble(kFinestTolerance) + " relative change)");
    }
    tolerance_ = std::max(kFinestTolerance, tolerance_ / factor);
    // The block solves must be at least as accurate as the change the test now looks for.
    inner_tolerance_ = std::max(kFinestTolerance, std::min(inner_tolerance_, tolerance_));
    stable_ = 0;
    fresh_ = true;  // solve again with the tighter inner tolerance, even without new input
    return Status::Ok();
  }
  void InputsFinal(bool final) override { inputs_final_ = final; }
  bool LocallyConverged() const override { return stable_ >= p_.stable_iterations; }

  std::string SaveState() const override {
    std::string s;
    auto put = [&](const void* p, size_t n) { s.append(static_cast<const char*>(p), n); };
    put(&iterations_, sizeof iterations_);
    put(&stable_, sizeof stable_);
    put(x_.data(), x_.size() * sizeof(double));
    for (const auto& v : xin_) put(v.data(), v.size() * sizeof(double));
    return s;
  }

  Status RestoreState(std::string_view state) override {
    size_t need = sizeof iterations_ + sizeof stable_ + x_.size() * sizeof(double);
    for (const auto& v : xin_) need += v.size() * sizeof(double);
    if (state.size() != need) return Corruption("cg: checkpoint of the wrong size for this block");
    const char* p = state.data();
    auto get = [&](void* dst, size_t n) {
      std::memcpy(dst, p, n);
      p += n;
    };
    get(&iterations_, sizeof iterations_);
    get(&stable_, sizeof stable_);
    get(x_.data(), x_.size() * sizeof(double));
    for (auto& v : xin_) get(v.data(), v.size() * sizeof(double));
    fresh_ = true;
    return Status::Ok();
  }

  // The values of the rows this task owns (overlap rows are their owners' to give), after
  // their count.
  std::string ResultSlice() const override {
    const auto count = static_cast<int32_t>(b_.own.size());
    std::string s(reinterpret_cast<const char*>(&count), 4);
    std::vector<double> values(b_.own.size());
    for (size_t k = 0; k < b_.own.size(); ++k) values[k] = x_[b_.own[k]];
    s += PackDoubles(values.data(), values.size());
    return s;
  }

 private:
  // The finest local test: a few units in the last place of a double, where block solves
  // stop telling one iterate from the next.
  static constexpr double kFinestTolerance = 1e-14;

  Block b_;
  CgParams p_;
  double tolerance_, inner_tolerance_;  // p_'s, tightened by Tighten()
  BlockCg solver_;
  std::unique_ptr<BlockDirect> direct_;  // the block's factor; null: solver_ iterates
  Eigen::VectorXd x_, rhs_;
  std::vector<Eigen::VectorXd> xin_;
  std::map<uint32_t, size_t> index_;
  bool fresh_ = true;
  bool inputs_final_ = false;
  uint64_t iterations_ = 0;
  int stable_ = 0;
  double change_ = 0;
};

}  // namespace

Result<CgParams> ParseCgParams(const app::JobParams& params) {
  static const std::set<std::string> kKnown = {"n", "bandwidth", "seed", "matrix", "rhs", "tolerance",
                                               "stable_iterations", "inner_tolerance", "output",
                                               "residual_tolerance", "inner", "matrix_cache", "partition",
                                               "overlap", "shared_input"};
  CgParams p;
  for (const auto& [key, value] : params.values) {
    if (!kKnown.count(key)) return InvalidArgument("cg: unknown parameter params." + key);
  }
  const bool has_matrix = params.Find("matrix") != nullptr;
  const bool has_n = params.Find("n") != nullptr;
  if (has_matrix == has_n) {
    return InvalidArgument("cg: give either params.matrix (a Matrix Market file) or params.n (with bandwidth and seed)");
  }
  p.generated = has_n;
  if (has_n) {
    auto n = ParseInt("n", *params.Find("n"));
    if (!n.ok()) return n.status();
    if (*n < 1 || *n > 100000000) return InvalidArgument("cg: params.n must be in 1..100000000");
    p.spec.n = static_cast<int>(*n);
    int64_t bw = std::min<int64_t>(8, p.spec.n - 1), seed = 1;  // default: 8, or less for tiny n
    if (auto* s = params.Find("bandwidth")) {
      auto v = ParseInt("bandwidth", *s);
      if (!v.ok()) return v.status();
      bw = *v;
    }
    if (auto* s = params.Find("seed")) {
      auto v = ParseInt("seed", *s);
      if (!v.ok()) return v.status();
      seed = *v;
    }
    if (bw < 0 || bw >= p.spec.n + (p.spec.n == 1)) return InvalidArgument("cg: params.bandwidth must be in 0..n-1");
    p.spec.bandwidth = static_cast<int>(bw);
    p.spec.seed = static_cast<uint64_t>(seed);
    if (params.Find("rhs")) return InvalidArgument("cg: params.rhs goes with params.matrix");
  } else {
    for (const char* k : {"bandwidth", "seed"}) {
      if (params.Find(k)) return InvalidArgument(std::string("cg: params.") + k + " goes with params.n");
    }
    p.matrix = Resolve(params.base_dir, *params.Find("matrix"));
    if (auto* s = params.Find("rhs")) p.rhs = Resolve(params.base_dir, *s);
  }
  if (auto* s = params.Find("output")) p.output = Resolve(params.base_dir, *s);
  if (auto* s = params.Find("tolerance")) {
    auto v = ParseDouble("tolerance", *s);
    if (!v.ok()) return v.status();
    if (*v <= 0) return InvalidArgument("cg: params.tolerance must be positive");
    p.tolerance = *v;
  }
  if (auto* s = params.Find("inner_tolerance")) {
    auto v = ParseDouble("inner_tolerance", *s);
    if (!v.ok()) return v.status();
    if (*v <= 0 || *v >= 1) return InvalidArgument("cg: params.inner_tolerance must be in (0, 1)");
    p.inner_tolerance = *v;
  }
  if (auto* s = params.Find("residual_tolerance")) {
    auto v = ParseDouble("residual_tolerance", *s);
    if (!v.ok()) return v.status();
    if (*v <= 0 || *v >= 1) return InvalidArgument("cg: params.residual_tolerance must be in (0, 1)");
    p.residual_tolerance = *v;
  }
  if (auto* s = params.Find("inner")) {
    if (*s != "auto" && *s != "direct" && *s != "cg") {
      return InvalidArgument("cg: params.inner must be \"auto\", \"direct\" or \"cg\"");
    }
    p.inner = *s;
  }
  if (auto* s = params.Find("partition")) {
    if (*s != "auto" && *s != "metis" && *s != "contiguous") {
      return InvalidArgument("cg: params.partition must be \"auto\", \"metis\" or \"contiguous\"");
    }
    p.partition = *s;
  }
  if (auto* s = params.Find("overlap"); s && *s != "auto") {
    auto v = ParseInt("overlap", *s);
    if (!v.ok() || *v < 0 || *v > 100) {
      return InvalidArgument("cg: params.overlap must be \"auto\" or a number of layers in 0..100");
    }
    p.overlap = static_cast<int>(*v);
  }
  if (auto* s = params.Find("matrix_cache")) {
    if (*s != "true" && *s != "false") return InvalidArgument("cg: params.matrix_cache must be true or false");
    p.matrix_cache = *s == "true";
  }
  if (auto* s = params.Find("shared_input")) {
    if (*s != "auto" && *s != "true" && *s != "false") {
      return InvalidArgument("cg: params.shared_input must be \"auto\", true or false");
    }
    if (p.generated) return InvalidArgument("cg: params.shared_input goes with params.matrix");
    if (*s == "true" && !p.matrix_cache) {
      return InvalidArgument("cg: params.shared_input = true needs matrix_cache (daemons read the matrix's cache)");
    }
    p.shared_input = *s;
  }
  if (auto* s = params.Find("stable_iterations")) {
    auto v = ParseInt("stable_iterations", *s);
    if (!v.ok()) return v.status();
    if (*v < 1 || *v > 1000) return InvalidArgument("cg: params.stable_iterations must be in 1..1000");
    p.stable_iterations = static_cast<int>(*v);
  }
  return p;
}

Result<MatrixRead> ReadMatrix(const std::string& path, bool use_cache, std::vector<std::string>& notes) {
  // The file's version before it is read: a cache made now is keyed by what was parsed.
  std::optional<MatrixFileVersion> version;
  if (use_cache) {
    if (auto v = MatrixFileVersionOf(path); v.ok()) version = *v;  // else the read below says why
  }
  if (version) {
    auto cached = LoadMatrixCache(path, *version);
    if (cached.ok()) {
      notes.push_back("cg: read " + path + " from its cache " + MatrixCachePath(path));
      return MatrixRead{std::move(*cached), version};
    }
    if (cached.status().code() != StatusCode::kNotFound) {
      notes.push_back("cg: cache not used: " + cached.status().message());
    }
  }
  auto m = ReadMatrixMarket(path);
  if (!m.ok()) return m.status();
  SpMat a(m->rows, m->cols);
  {
    std::vector<Eigen::Triplet<double>> t;
    t.reserve(m->entries.size());
    for (const auto& e : m->entries) t.emplace_back(e.row, e.col, e.value);
    m->entries = {};
    a.setFromTriplets(t.begin(), t.end());
  }
  a.makeCompressed();
  MatrixRead read{std::move(a), std::nullopt};
  if (version) {
    if (Status saved = SaveMatrixCache(path, read.a, *version); saved.ok()) {
      notes.push_back("cg: wrote the cache " + MatrixCachePath(path) + " for the next run");
      read.cached = version;
    } else {
      notes.push_back("cg: no cache for the next run: " + saved.message());
    }
  }
  return read;
}

Result<app::JobPlan> CgApp::Prepare(const app::JobParams& params) {
  auto p = ParseCgParams(params);
  if (!p.ok()) return p.status();
  std::string name = "generated system";
  double read_seconds = 0;
  std::vector<std::string> notes;
  if (p->generated) {
    const double n = p->spec.n, entries = n * (2.0 * p->spec.bandwidth + 1);
    AIAC_RETURN_IF_ERROR(CheckFitsInMemory("cg: a generated system of n = " + std::to_string(p->spec.n) +
                                               " with bandwidth " + std::to_string(p->spec.bandwidth),
                                           entries * kBytesPerEntry + n * kBytesPerRow));
    problem_ = Generate(p->spec);
  } else {
    const auto read_start = std::chrono::steady_clock::now();
    name = p->matrix;
    auto matrix = ReadMatrix(p->matrix, p->matrix_cache, notes);
    if (!matrix.ok()) return matrix.status();
    problem_.a = std::move(matrix->a);
    shared_source_.reset();
    if (p->shared_input == "true" || (p->shared_input == "auto" && params.shared_files)) {
      if (matrix->cached) {
        shared_matrix_ = std::filesystem::absolute(p->matrix).string();
        shared_source_ = matrix->cached;
        notes.push_back("cg: the daemons build their own blocks from " + MatrixCachePath(shared_matrix_));
      } else {
        notes.push_back("cg: the blocks are sent: the daemons need the matrix's cache to read it themselves");
      }
    }
    read_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - read_start).count();
    const auto rows = problem_.a.rows(), cols = problem_.a.cols();
    if (rows != cols) {
      return InvalidArgument(name + ": the matrix is " + std::to_string(rows) + " x " + std::to_string(cols) + ", not square");
    }
    if (p->rhs.empty()) {
      problem_.b = problem_.a * Eigen::VectorXd::Ones(cols);
    } else {
      const auto rhs_start = std::chrono::steady_clock::now();
      auto b = ReadMatrixMarketVector(p->rhs, rows);
      if (!b.ok()) return b.status();
      read_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - rhs_start).count();
      problem_.b = Eigen::Map<Eigen::VectorXd>(b->data(), static_cast<Eigen::Index>(b->size()));
    }
    AIAC_RETURN_IF_ERROR(CheckSystem(problem_.a, problem_.b, name));
  }
  const int n = static_cast<int>(problem_.a.rows());
  if (params.tasks < 1 || params.tasks > static_cast<uint32_t>(n)) {
    return InvalidArgument("cg: " + std::to_string(params.tasks) + " tasks for " + std::to_string(n) +
                           " rows (at most one task per row)");
  }
  // METIS or slices: decided once, on equal shares; Reweigh keeps the choice.
  metis_ = p->metis();
  if (metis_ && p->partition == "auto") {
    if (const double cut = CutFraction(problem_.a, ContiguousPartition(n, static_cast<int>(params.tasks)));
        cut <= kSlicesGoodEnough) {
      notes.push_back("cg: slices of consecutive rows cut " + FormatDouble(100 * cut) +
                      " % of the matrix's entries: no METIS partition needed");
      metis_ = false;
    }
  }
  auto plan = Split(*p, params.tasks, {}, std::move(notes));
  if (!plan.ok()) return plan.status();
  plan->read_seconds = read_seconds;
  return plan;
}

Result<std::optional<app::JobPlan>> CgApp::Reweigh(const app::JobParams& params, const std::vector<double>& task_powers) {
  auto p = ParseCgParams(params);
  if (!p.ok()) return p.status();
  if (task_powers.size() != params.tasks || problem_.a.rows() == 0) {
    return InvalidArgument("cg: " + std::to_string(task_powers.size()) + " powers for " + std::to_string(params.tasks) +
                           " tasks (or Reweigh before Prepare)");
  }
  for (double power : task_powers) {
    if (!(power > 0) || !std::isfinite(power)) return InvalidArgument("cg: a daemon's power must be positive");
  }
  const auto [lo, hi] = std::minmax_element(task_powers.begin(), task_powers.end());
  auto plan = Split(*p, params.tasks, task_powers,
                    {"cg: blocks weighted by the powers of their daemons (" + FormatDouble(*lo) + " to " +
                     FormatDouble(*hi) + ")"});
  if (!plan.ok()) return plan.status();
  return std::optional<app::JobPlan>(std::move(*plan));
}

Result<app::JobPlan> CgApp::Split(const CgParams& p, uint32_t task_count, const Shares& shares,
                                  std::vector<std::string> notes) {
  const int n = static_cast<int>(problem_.a.rows());
  const auto tasks = static_cast<int>(task_count);
  RowPartition part;
  bool metis = metis_;
  if (metis) {
    auto parts = MetisPartition(problem_.a, tasks, shares);
    if (parts.ok()) {
      part = std::move(*parts);
    } else if (parts.status().code() == StatusCode::kInvalidArgument) {
      // A part left empty (a tiny or oddly coupled system): every task still needs rows.
      notes.push_back(parts.status().message() + "; contiguous partition instead");
      metis = false;
    } else {
      return parts.status();
    }
  }
  if (!metis) part = ContiguousPartition(n, tasks, shares);
  // Each block: its own rows and `layers` layers more; who sends whom what follows from those.
  std::vector<std::vector<int>> block_rows(task_count);
  const bool auto_layers = p.overlap < 0 && !p.generated;
  const int layers = p.overlap >= 0 ? p.overlap
                     : p.generated  ? 0
                                    : AutoLayers(problem_.a, part.rows, kAutoOverlapGrowth, kAutoOverlapLayers);
  for (int l = 0; l < tasks; ++l) block_rows[l] = Extend(problem_.a, part.rows[l], layers);
  const auto sends = SendLists(problem_.a, part.owner, block_rows);
  const SpMat& a = problem_.a;
  RowFn row = [&](int i, std::vector<int>& cols, std::vector<double>& vals) {
    cols.clear();
    vals.clear();
    for (SpMat::InnerIterator it(a, i); it; ++it) {
      cols.push_back(static_cast<int>(it.col()));
      vals.push_back(it.value());
    }
  };
  app::JobPlan plan;
  plan.target_change = p.tolerance;
  plan.graph.resize(task_count);
  plan.slices.resize(task_count);
  // A generated system's daemons build their own blocks from the parameters; only uneven
  // slices need saying, by their starts.
  const std::string starts_slice = p.daemon_builds_block() && !shares.empty()
                                       ? EncodeSliceStarts(SliceStarts(n, tasks, shares))
                                       : std::string();
  // The blocks are independent (each reads the matrix, writes its own slot): built on every core.
  const OwnerFn owner = [&](int r) { return part.owner[static_cast<size_t>(r)]; };
  auto build = [&](uint32_t l) {
    const std::vector<int>& rows = block_rows[l];
    std::vector<double> b_rows(rows.size());
    std::vector<int> own;
    for (size_t k = 0; k < rows.size(); ++k) {
      b_rows[k] = problem_.b[rows[k]];
      if (part.owner[static_cast<size_t>(rows[k])] == l) own.push_back(static_cast<int>(k));
    }
    if (shared_source_) {
      BlockOutline outline = OutlineBlock(a, std::move(b_rows), rows, std::move(own), part.owner, sends[l],
                                          shared_matrix_, *shared_source_);
      plan.graph[l] = NodeOf(outline.nonzeros, outline.in, outline.out);
      plan.slices[l] = EncodeBlockOutline(outline);
      return;
    }
    Block block = BuildBlock(row, b_rows, n, rows, std::move(own), owner, sends[l]);
    plan.graph[l] = NodeOf(block.nonzeros, block.in, block.out);
    plan.slices[l] = p.daemon_builds_block() ? starts_slice : EncodeBlock(block);
  };
  const uint32_t threads = std::clamp<uint32_t>(std::thread::hardware_concurrency(), 1, task_count);
  {
    std::vector<std::jthread> workers;
    for (uint32_t w = 1; w < threads; ++w) {
      workers.emplace_back([&, w] {
        for (uint32_t l = w; l < task_count; l += threads) build(l);
      });
    }
    for (uint32_t l = 0; l < task_count; l += threads) build(l);
  }
  if (metis || layers > 0 || !shares.empty()) {
    size_t smallest = part.rows[0].size(), largest = 0, extended = 0;
    for (uint32_t l = 0; l < task_count; ++l) {
      smallest = std::min(smallest, part.rows[l].size());
      largest = std::max(largest, part.rows[l].size());
      extended = std::max(extended, block_rows[l].size());
    }
    notes.push_back("cg: " + std::string(metis ? "METIS" : "contiguous") + " partition into " +
                    std::to_string(task_count) + " blocks of " + std::to_string(smallest) + " to " +
                    std::to_string(largest) + " rows, at most " + std::to_string(extended) + " with overlap " +
                    std::to_string(layers) + (auto_layers ? " (auto)" : ""));
  }
  owned_ = std::move(part.rows);
  plan.notes = std::move(notes);
  return plan;
}

Result<std::unique_ptr<app::Task>> CgApp::MakeTask(const app::JobParams& params, uint32_t task, std::string_view slice) {
  auto p = ParseCgParams(params);
  if (!p.ok()) return p.status();
  if (p->daemon_builds_block()) {
    if (params.tasks < 1 || params.tasks > static_cast<uint32_t>(p->spec.n) || task >= params.tasks) {
      return InvalidArgument("cg: task " + std::to_string(task) + " of " + std::to_string(params.tasks) + " does not fit n");
    }
    // Equal slices unless the spawner sent their starts (Reweigh: daemons of unequal power).
    std::vector<int> starts;
    if (slice.empty()) {
      starts = Partition(p->spec.n, static_cast<int>(params.tasks));
    } else {
      auto sent = DecodeSliceStarts(slice, p->spec.n, static_cast<int>(params.tasks));
      if (!sent.ok()) return sent.status();
      starts = std::move(*sent);
    }
    const double rows = starts[task + 1] - starts[task];
    AIAC_RETURN_IF_ERROR(CheckFitsInMemory("cg: block " + std::to_string(task) + " (" + std::to_string(starts[task + 1] - starts[task]) +
                                               " rows)", rows * (2.0 * p->spec.bandwidth + 1) * kBytesPerEntry + rows * kBytesPerRow));
    const GeneratedSpec spec = p->spec;
    RowFn row = [spec](int i, std::vector<int>& cols, std::vector<double>& vals) { GeneratedRow(spec, i, cols, vals); };
    std::vector<double> b_local;
    std::vector<int> cols;
    std::vector<double> vals;
    for (int i = starts[task]; i < starts[task + 1]; ++i) {
      GeneratedRow(spec, i, cols, vals);
      double sum = 0;
      for (double v : vals) sum += v;
      b_local.push_back(sum);  // b = A * ones
    }
    std::vector<int> block_rows(b_local.size()), own(b_local.size());
    for (size_t k = 0; k < block_rows.size(); ++k) {
      block_rows[k] = starts[task] + static_cast<int>(k);
      own[k] = static_cast<int>(k);
    }
    const OwnerFn owner = [&starts](int r) { return static_cast<uint32_t>(OwnerOf(starts, r)); };
    Block block = BuildBlock(row, b_local, spec.n, std::move(block_rows), std::move(own), owner,
                             SymmetricSendLists(row, spec.n, starts, task));
    return NewCgTask(std::move(block), *p);
  }
  if (IsBlockOutline(slice)) {
    auto outline = DecodeBlockOutline(slice);
    if (!outline.ok()) return outline.status();
    auto block = BuildBlockFromCache(std::move(*outline));
    if (!block.ok()) return block.status();
    return NewCgTask(std::move(*block), *p);
  }
  auto block = DecodeBlock(slice);
  if (!block.ok()) return block.status();
  return NewCgTask(std::move(*block), *p);
}

Result<app::GatherReport> CgApp::Gather(const app::JobParams& params, const std::vector<std::string>& slices) {
  auto p = ParseCgParams(params);
  if (!p.ok()) return p.status();
  const int n = static_cast<int>(problem_.a.rows());
  Eigen::VectorXd x = Eigen::VectorXd::Constant(n, std::nan(""));
  if (slices.size() != owned_.size()) {
    return Corruption("cg: " + std::to_string(slices.size()) + " results for " + std::to_string(owned_.size()) +
                      " tasks");
  }
  for (size_t l = 0; l < slices.size(); ++l) {
    const std::string& s = slices[l];
    const std::vector<int>& rows = owned_[l];
    int32_t count = 0;
    if (s.size() >= 4) std::memcpy(&count, s.data(), 4);
    if (s.size() < 4 || count < 0 || static_cast<size_t>(count) != rows.size() ||
        s.size() != 4 + rows.size() * sizeof(double)) {
      return Corruption("cg: result of task " + std::to_string(l) + " does not fit its rows");
    }
    for (size_t k = 0; k < rows.size(); ++k) std::memcpy(&x[rows[k]], s.data() + 4 + k * sizeof(double), sizeof(double));
  }
  app::GatherReport report;
  const double b_norm = problem_.b.norm();
  const double r_norm = (problem_.b - problem_.a * x).norm();
  report.residual = b_norm > 0 ? r_norm / b_norm : r_norm;  // NaN if a row was never sent
  report.residual_target = p->residual_tolerance;
  if (!std::isfinite(report.residual)) {
    report.status = "diverged";
    report.error = "the gathered solution has non-finite entries";
  } else if (report.residual > p->residual_tolerance) {
    report.status = "unconverged";
    report.error = "residual " + FormatDouble(report.residual) + " is above residual_tolerance " +
                   FormatDouble(p->residual_tolerance);
  }
  if (p->generated) report.numbers["error_inf"] = (x - Eigen::VectorXd::Ones(n)).cwiseAbs().maxCoeff();
  if (!p->output.empty()) {
    AIAC_RETURN_IF_ERROR(WriteMatrixMarketVector(p->output, std::vector<double>(x.data(), x.data() + n)));
    report.output = p->output;
  }
  return report;
}

Result<std::unique_ptr<app::Task>> NewCgTask(Block block, const CgParams& params) {
  auto t = CgTask::Make(std::move(block), params);
  if (!t.ok()) return t.status();
  return std::unique_ptr<app::Task>(std::move(*t));
}

}  // namespace aiac::cg
