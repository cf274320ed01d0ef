#include "apps/cg/cg_app.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <future>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <thread>

#include "apps/cg/block_cg.h"
#include "apps/cg/block_direct.h"
#include "apps/cg/block_outline.h"
#include "apps/cg/byte_codec.h"
#include "apps/cg/cg_messages.h"
#include "apps/cg/coarse_space.h"
#include "apps/cg/held_rows.h"
#include "apps/cg/matching.h"
#include "apps/cg/matrix_cache.h"
#include "apps/cg/matrix_market.h"
#include "apps/cg/partition.h"
#include "apps/cg/renumber.h"
#include "apps/cg/row_moves.h"
#include "core/memory_budget.h"

namespace aiac::cg {
namespace {

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

// The slice of a task of a two-level job: a magic, the pieces per coupling, then its own slice.
constexpr std::string_view kCoarseSliceMagic = "acgc";

std::string EncodeCoarseSlice(int pieces, std::string_view slice) {
  std::string out(kCoarseSliceMagic);
  const auto p = static_cast<int32_t>(pieces);
  out.append(reinterpret_cast<const char*>(&p), sizeof p);
  out.append(slice);
  return out;
}

bool IsCoarseSlice(std::string_view slice) { return slice.starts_with(kCoarseSliceMagic); }

Result<std::pair<int, std::string_view>> DecodeCoarseSlice(std::string_view slice) {
  int32_t pieces = 0;
  if (!IsCoarseSlice(slice) || slice.size() < kCoarseSliceMagic.size() + sizeof pieces)
    return InvalidArgument("cg: not the slice of a task of a two-level job");
  std::memcpy(&pieces, slice.data() + kCoarseSliceMagic.size(), sizeof pieces);
  if (pieces < 1 || pieces > kMostCoarsePieces)
    return InvalidArgument("cg: the slice of a two-level task has " + std::to_string(pieces) +
                           " pieces per coupling");
  return std::pair<int, std::string_view>(pieces,
                                          slice.substr(kCoarseSliceMagic.size() + sizeof pieces));
}

}  // namespace

Result<MatrixRead> ParseMatrix(const std::string& path, bool use_cache,
                               std::vector<std::string>& notes) {
  // The file's version before it is read: a cache made now is keyed by what was parsed.
  std::optional<MatrixFileVersion> version;
  if (use_cache) {
    if (auto v = MatrixFileVersionOf(path); v.ok()) version = *v;  // else the read below says why
  }
  if (version) {
    auto cached = LoadMatrixCache(path, *version);
    if (cached.ok()) {
      notes.push_back("cg: read " + path + " from its cache " + MatrixCachePath(path));
      MatrixRead read;
      read.mapped = std::move(*cached);
      read.cached = version;
      return read;
    }
    if (cached.status().code() == StatusCode::kCorruption) {
      // Removed now, so that a cache that cannot be written again leaves no damaged one behind.
      std::error_code ec;
      std::filesystem::remove(MatrixCachePath(path), ec);
      notes.push_back("cg: warning: removed a damaged cache: " + cached.status().message());
    } else if (cached.status().code() != StatusCode::kNotFound) {
      notes.push_back("cg: cache not used: " + cached.status().message());
    }
  }
  AIAC_ASSIGN_OR_RETURN(auto a, ReadMatrixMarketRows(path));
  MatrixRead read;
  read.parsed = std::move(a);
  read.to_cache = version;
  return read;
}

Result<std::string> WriteMatrixCache(const std::string& path, const SpMat& a,
                                     const MatrixFileVersion& version) {
  if (Status saved = SaveMatrixCache(path, a, version); !saved.ok()) {
    return Status(saved.code(), "cg: no cache for the next run: " + saved.message());
  }
  return "cg: wrote the cache " + MatrixCachePath(path) + " for the next run";
}

Result<MatrixRead> ReadMatrix(const std::string& path, bool use_cache,
                              std::vector<std::string>& notes) {
  auto read = ParseMatrix(path, use_cache, notes);
  if (!read.ok() || !read->to_cache) return read;
  auto written = WriteMatrixCache(path, read->parsed, *read->to_cache);
  notes.push_back(written.ok() ? *written : written.status().message());
  if (written.ok()) read->cached = read->to_cache;
  read->to_cache.reset();
  return read;
}

// Why daemons that see the matrix's file are sent their blocks all the same.
constexpr const char* kBlocksSentNote =
    "cg: the blocks are sent: the daemons need the matrix's cache to read it themselves";

Status CgApp::ReadSystem(const CgParams& p, bool shared_files, Reading& r) {
  const auto read_start = std::chrono::steady_clock::now();
  AIAC_ASSIGN_OR_RETURN(auto matrix, ParseMatrix(p.matrix, p.matrix_cache, r.notes));
  problem_.a = std::move(matrix.parsed);  // (empty when the matrix is mapped: A())
  mapped_ = std::move(matrix.mapped);
  if (mapped_) {
    if (Status bad = CheckMatrix(A(), p.matrix); !bad.ok()) {
      // The cache's checksums and structure hold, yet its matrix fails what the file's would
      // pass: it was not made from this file (or the file fails too: the read below says so).
      // Kept, it would fail every later run.
      mapped_.reset();
      const std::string cache = MatrixCachePath(p.matrix);
      std::error_code ec;
      std::filesystem::remove(cache, ec);
      r.notes.push_back("cg: warning: removed the cache " + cache + ": " + bad.message() +
                        "; reading the file again");
      AIAC_ASSIGN_OR_RETURN(matrix, ParseMatrix(p.matrix, p.matrix_cache, r.notes));
      problem_.a = std::move(matrix.parsed);
    }
  }
  // A parsed matrix's cache is written while the matrix is checked and partitioned (it is only
  // read: both may look at it at once); the writer is waited for before the plan is returned.
  // On an 800,000-row system the write took 0.3-0.8 s on our VM, the partition 0.2-0.4 s.
  if (matrix.to_cache) {
    r.cache_writer = std::async(std::launch::async,
                                [path = p.matrix, &a = problem_.a, version = *matrix.to_cache] {
                                  return WriteMatrixCache(path, a, version);
                                });
  }
  shared_source_.reset();
  if (p.shared_input == "true" || (p.shared_input == "auto" && shared_files)) {
    if (matrix.cached || matrix.to_cache) {  // (a cache that cannot be written: see Prepare)
      shared_matrix_ = std::filesystem::absolute(p.matrix).string();
      shared_source_ = matrix.cached ? matrix.cached : matrix.to_cache;
    } else {
      r.notes.push_back(kBlocksSentNote);
    }
  }
  r.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - read_start).count();
  const auto rows = A().rows(), cols = A().cols();
  if (rows != cols) {
    return InvalidArgument(p.matrix + ": the matrix is " + std::to_string(rows) + " x " +
                           std::to_string(cols) + ", not square");
  }
  if (p.rhs.empty()) {
    problem_.b = A() * Eigen::VectorXd::Ones(cols);
  } else {
    const auto rhs_start = std::chrono::steady_clock::now();
    AIAC_ASSIGN_OR_RETURN(std::vector<double> b, ReadMatrixMarketVector(p.rhs, rows));
    r.seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - rhs_start).count();
    problem_.b = Eigen::Map<Eigen::VectorXd>(b.data(), static_cast<Eigen::Index>(b.size()));
  }
  AIAC_RETURN_IF_ERROR(CheckSystem(A(), problem_.b, p.matrix));
  return PutLargeEntriesOnTheDiagonal(p, r);
}

Status CgApp::PutLargeEntriesOnTheDiagonal(const CgParams& p, Reading& r) {
  row_order_.clear();
  const int zero = FirstZeroOnDiagonal(A());
  if (zero < 0) return Status::Ok();
  // Block Jacobi needs nonsingular diagonal blocks, not a zero-free diagonal: with large entries
  // on it, the blocks are (Duff and Koster's maximum product transversal).
  auto perm = LargeDiagonalRows(A());
  if (!perm.ok()) {
    return InvalidArgument(p.matrix + ": zero on the diagonal at row " + std::to_string(zero + 1) +
                           ", and " + perm.status().message());
  }
  permuted_ = PermuteRows(A(), *perm);
  Eigen::VectorXd b(problem_.b.size());
  size_t moved = 0;
  for (size_t j = 0; j < perm->size(); ++j) {
    b[static_cast<Eigen::Index>(j)] = problem_.b[(*perm)[j]];
    moved += (*perm)[j] != static_cast<int>(j);
  }
  problem_.b = std::move(b);
  row_order_ = std::move(*perm);
  r.notes.push_back("cg: zero on the diagonal at row " + std::to_string(zero + 1) + ": " +
                    std::to_string(moved) +
                    " rows permuted to put large entries on the diagonal (maximum product "
                    "matching, as MC64; the unknowns keep their order)");
  if (!shared_matrix_.empty()) {
    // The daemons' copy (the cache) is in the file's row order.
    shared_matrix_.clear();
    shared_source_.reset();
    r.notes.push_back(kBlocksSentNote);
  }
  return Status::Ok();
}

void CgApp::ChoosePartition(const CgParams& p, uint32_t tasks, std::vector<std::string>& notes) {
  // METIS or slices: decided once, on equal shares; Reweigh keeps the choice.
  metis_ = p.metis();
  if (!metis_ || p.partition != "auto") return;
  const int n = static_cast<int>(A().rows());
  const RowPartition slices = ContiguousPartition(n, static_cast<int>(tasks));
  const double cut = CutFraction(A(), slices);
  if (cut <= kSlicesGoodEnough) {
    notes.push_back("cg: slices of consecutive rows cut " + FormatDouble(100 * cut) +
                    " % of the matrix's entries: no METIS partition needed");
    metis_ = false;
    return;
  }
  // Rows not numbered along the graph: slices of the renumbered rows may do (and can move).
  std::vector<int> order = ReverseCuthillMcKee(A());
  SpMat renumbered = Renumbered(A(), order);
  const double rcm_cut = CutFraction(renumbered, slices);
  if (rcm_cut > kSlicesGoodEnough) return;
  notes.push_back("cg: slices of consecutive rows cut " + FormatDouble(100 * cut) +
                  " % of the matrix's entries, " + FormatDouble(100 * rcm_cut) +
                  " % once renumbered in reverse Cuthill-McKee order (bandwidth " +
                  std::to_string(Bandwidth(renumbered)) + "): no METIS partition needed");
  Eigen::VectorXd b(n);
  for (int i = 0; i < n; ++i) b[i] = problem_.b[order[static_cast<size_t>(i)]];
  problem_.b = std::move(b);
  order_ = std::move(order);
  renumbered_ = std::move(renumbered);
  metis_ = false;
  if (shared_source_) {
    shared_source_.reset();
    notes.push_back("cg: the blocks are sent: the matrix's cache holds the file's numbering");
  }
}

Result<app::JobPlan> CgApp::Prepare(const app::JobParams& params) {
  AIAC_ASSIGN_OR_RETURN(const CgParams p, ParseCgParams(params));
  params_ = p;
  order_.clear();
  renumbered_ = SpMat();
  predicted_.reset();
  // Writes the cache of a parsed matrix meanwhile; any return waits for it (std::async's future).
  Reading reading;
  if (p.generated) {
    const double n = p.spec.n, entries = n * (2.0 * p.spec.bandwidth + 1);
    AIAC_RETURN_IF_ERROR(
        CheckFitsInMemory("cg: a generated system of n = " + std::to_string(p.spec.n) +
                              " with bandwidth " + std::to_string(p.spec.bandwidth),
                          entries * kBytesPerEntry + n * kBytesPerRow));
    problem_ = Generate(p.spec);
    mapped_.reset();
  } else {
    AIAC_RETURN_IF_ERROR(ReadSystem(p, params.shared_files, reading));
  }
  const int n = static_cast<int>(A().rows());
  if (params.tasks < 1 || params.tasks > static_cast<uint32_t>(n)) {
    return InvalidArgument("cg: " + std::to_string(params.tasks) + " tasks for " +
                           std::to_string(n) + " rows (at most one task per row)");
  }
  ChoosePartition(p, params.tasks, reading.notes);
  // Rows of a matrix from a file move between slices when its pattern is symmetric
  // (row_moves.h).
  bandwidth_ = p.generated ? std::optional<int>(p.spec.bandwidth)
               : metis_    ? std::nullopt
                           : SymmetricBandwidth(A());
  AIAC_RETURN_IF_ERROR(ChooseCoarse(p, params.tasks, reading.notes));
  auto plan = Split(p, params.tasks, {}, reading.notes);
  if (!plan.ok()) return plan.status();
  if (reading.cache_writer.valid()) {
    auto written = reading.cache_writer.get();
    if (!written.ok() && shared_source_) {
      // The outlines name a cache that is not there: the blocks are sent after all.
      shared_source_.reset();
      reading.notes.push_back(kBlocksSentNote);
      plan = Split(p, params.tasks, {}, std::move(reading.notes));
      if (!plan.ok()) return plan.status();
    }
    plan->notes.push_back(written.ok() ? *written : written.status().message());
  }
  if (shared_source_) {
    plan->notes.push_back("cg: the daemons build their own blocks from " +
                          MatrixCachePath(shared_matrix_));
  }
  plan->read_seconds = reading.seconds;
  return plan;
}

Status CgApp::ChooseCoarse(const CgParams& p, uint32_t tasks, std::vector<std::string>& notes) {
  coarse_ = false;
  if (p.coarse == "none" || p.generated || tasks < 2) return Status::Ok();
  if (p.coarse == "harmonic") {
    if (!IsSymmetric(A())) {
      return InvalidArgument(
          "cg: params.coarse = \"harmonic\" needs a symmetric matrix (A Z is computed from "
          "each block's own rows and their mirrors)");
    }
    coarse_ = true;
  } else {
    coarse_ = tasks <= static_cast<uint32_t>(kMostCoarseTasks) && WantsCoarseSpace(A());
  }
  // The coarse functions are made for the blocks as they are: rows stay (NoteBlocks says so).
  if (coarse_) bandwidth_.reset();
  return Status::Ok();
}

Result<std::optional<app::JobPlan>> CgApp::Reweigh(const app::JobParams& params,
                                                   const std::vector<double>& task_powers) {
  if (!params_) return InvalidArgument("cg: Reweigh before Prepare");
  const CgParams* p = &*params_;
  if (task_powers.size() != params.tasks || A().rows() == 0) {
    return InvalidArgument("cg: " + std::to_string(task_powers.size()) + " powers for " +
                           std::to_string(params.tasks) + " tasks (or Reweigh before Prepare)");
  }
  for (double power : task_powers) {
    if (!(power > 0) || !std::isfinite(power))
      return InvalidArgument("cg: a daemon's power must be positive");
  }
  const auto [lo, hi] = std::minmax_element(task_powers.begin(), task_powers.end());
  auto plan = Split(*p, params.tasks, task_powers,
                    {"cg: blocks weighted by the powers of their daemons (" + FormatDouble(*lo) +
                     " to " + FormatDouble(*hi) + ")"});
  if (!plan.ok()) return plan.status();
  return std::optional<app::JobPlan>(std::move(*plan));
}

Result<CgApp::Blocks> CgApp::PartitionBlocks(const CgParams& p, uint32_t task_count,
                                             const Shares& shares,
                                             std::vector<std::string>& notes) {
  const int n = static_cast<int>(A().rows());
  const auto tasks = static_cast<int>(task_count);
  Blocks blocks;
  blocks.metis = metis_;
  if (blocks.metis) {
    auto parts = MetisPartition(A(), tasks, shares);
    if (parts.ok()) {
      blocks.part = std::move(*parts);
    } else if (parts.status().code() == StatusCode::kInvalidArgument) {
      // A part left empty (a tiny or oddly coupled system): every task still needs rows.
      notes.push_back(parts.status().message() + "; contiguous partition instead");
      blocks.metis = false;
    } else {
      return parts.status();
    }
  }
  if (!blocks.metis) blocks.part = ContiguousPartition(n, tasks, shares);
  // Each block: its own rows and `layers` layers more; who sends whom what follows from those.
  blocks.rows.resize(task_count);
  blocks.auto_layers = p.overlap < 0 && !p.generated;
  // Multigrid blocks take AutoLayers' overlap whether they are iterated or factored, and their
  // fill is predicted with it; IC(0) and Jacobi blocks take at most kIteratedOverlapLayers when
  // they will be iterated, their fill predicted with those.
  const bool amg = p.iterated_with_amg();
  blocks.layers = p.overlap >= 0 ? p.overlap
                  : p.generated  ? 0
                  : amg ? AutoLayers(A(), blocks.part.rows, kAutoOverlapGrowth, kAutoOverlapLayers)
                        : kIteratedOverlapLayers;
  const bool iterated = WillIterate(p, blocks.part, blocks.layers);
  if (blocks.auto_layers && !amg) {
    blocks.layers = AutoLayers(A(), blocks.part.rows, kAutoOverlapGrowth,
                               iterated ? kIteratedOverlapLayers : kAutoOverlapLayers);
  }
  blocks.coarse_pieces = p.coarse_pieces > 0 ? p.coarse_pieces
                         : iterated          ? kIteratedCoarsePieces
                                             : kCoarsePieces;
  for (int l = 0; l < tasks; ++l) blocks.rows[l] = Extend(A(), blocks.part.rows[l], blocks.layers);
  // Rows move live between neighbouring slices while each stays wider than the bandwidth and the
  // overlap (row_moves.h): a generated system's, and a file's with a symmetric pattern. Each
  // block is then the slab of its slice that holds its layers (the same rows for a full band).
  chain_ = false;
  if (!blocks.metis && bandwidth_) {
    const std::vector<int> starts = SliceStarts(n, tasks, shares);
    blocks.slab = SlabOverlap(starts, blocks.rows);
    chain_ = SlicesCanMove(*bandwidth_, starts, blocks.slab);
    for (int l = 0; chain_ && blocks.slab > 0 && l < tasks; ++l) {
      const auto [lo, hi] = SlabRows(n, starts[l], starts[l + 1], blocks.slab);
      blocks.rows[l].resize(static_cast<size_t>(hi - lo));
      std::iota(blocks.rows[l].begin(), blocks.rows[l].end(), lo);
    }
  }
  return blocks;
}

bool CgApp::WillIterate(const CgParams& p, const RowPartition& part, int layers) {
  if (!predicted_) {
    // Not emplace(): clang 14 sees no default constructor of a nested struct with member
    // initializers through an optional declared in the enclosing class.
    predicted_ = FillPrediction{};
    // Only when inner = "auto" decides, for a symmetric matrix (the others are factored by LU,
    // which has no fill limit), and something "auto" follows from it.
    const bool matters =
        (p.overlap < 0 && !p.iterated_with_amg()) || (coarse_ && p.coarse_pieces < 0);
    if (p.generated || p.inner != "auto" || !matters || part.rows.empty() ||
        (!coarse_ && !IsSymmetric(A()))) {
      return false;
    }
    // The largest block, a middle one among equals (slices in the middle have two neighbours,
    // so more overlap).
    size_t largest = part.rows.size() / 2;
    for (size_t l = 0; l < part.rows.size(); ++l)
      if (part.rows[l].size() > part.rows[largest].size()) largest = l;
    const std::vector<int> rows = Extend(A(), part.rows[largest], layers);
    // A block that is not positive definite fails its factor whatever the fill: no prediction.
    auto fill = BlockDirect::PredictedFill(DiagonalBlock(A(), rows));
    if (fill.ok()) *predicted_ = {rows.size(), layers, *fill};
  }
  return predicted_->iterated();
}

app::JobPlan CgApp::BuildPlan(const CgParams& p, const Blocks& blocks, const Shares& shares) {
  const int n = static_cast<int>(A().rows());
  const auto task_count = static_cast<uint32_t>(blocks.rows.size());
  const RowPartition& part = blocks.part;
  const auto sends = SendLists(A(), part.owner, blocks.rows);
  const bool wrap =
      chain_ && !p.daemon_builds_block();  // the tasks learn the bandwidth from their slices
  const SpRef a = A();
  const RowFn row = MatrixRows(a);
  app::JobPlan plan;
  plan.target_change = p.tolerance;
  plan.items_in_chain = chain_;
  plan.graph.resize(task_count);
  plan.slices.resize(task_count);
  // A generated system's daemons build their own blocks from the parameters; only uneven
  // slices need saying, by their starts.
  const std::string starts_slice =
      p.daemon_builds_block() && !shares.empty()
          ? EncodeSliceStarts(SliceStarts(n, static_cast<int>(task_count), shares))
          : std::string();
  const OwnerFn owner = [&](int r) { return part.owner[static_cast<size_t>(r)]; };
  auto build = [&](uint32_t l) {
    const std::vector<int>& rows = blocks.rows[l];
    std::vector<double> b_rows(rows.size());
    std::vector<int> own;
    for (size_t k = 0; k < rows.size(); ++k) {
      b_rows[k] = problem_.b[rows[k]];
      if (part.owner[static_cast<size_t>(rows[k])] == l) own.push_back(static_cast<int>(k));
    }
    if (shared_source_) {
      BlockOutline outline = OutlineBlock(a, std::move(b_rows), rows, std::move(own), part.owner,
                                          sends[l], shared_matrix_, *shared_source_);
      plan.graph[l] = NodeOf(outline.nonzeros, outline.in, outline.out);
      plan.slices[l] =
          wrap ? EncodeMovableSlice(*bandwidth_, blocks.slab, EncodeBlockOutline(outline))
               : EncodeBlockOutline(outline);
      return;
    }
    Block block = BuildBlock(row, b_rows, n, rows, std::move(own), owner, sends[l]);
    plan.graph[l] = NodeOf(block.nonzeros, block.in, block.out);
    plan.slices[l] = p.daemon_builds_block() ? starts_slice
                     : wrap ? EncodeMovableSlice(*bandwidth_, blocks.slab, EncodeBlock(block))
                            : EncodeBlock(block);
  };
  // A two-level job: every task exchanges its coarse section with every other (coarse_rounds.h),
  // about two values per coarse function at each iteration.
  auto add_coarse = [&](uint32_t l) {
    if (!coarse_) return;
    const double volume = 2.0 * task_count * (1.0 + 2.0 * blocks.coarse_pieces);
    app::TaskNode& node = plan.graph[l];
    for (uint32_t m = 0; m < task_count; ++m) {
      if (m == l) continue;
      auto it = std::find_if(node.edges.begin(), node.edges.end(),
                             [m](const auto& e) { return e.first == m; });
      if (it == node.edges.end()) {
        node.edges.push_back({m, volume});
      } else {
        it->second += volume;
      }
    }
    plan.slices[l] = EncodeCoarseSlice(blocks.coarse_pieces, plan.slices[l]);
  };
  // The blocks are independent (each reads the matrix, writes its own slot): built on every core.
  const uint32_t threads = std::clamp<uint32_t>(std::thread::hardware_concurrency(), 1, task_count);
  std::vector<std::jthread> workers;
  for (uint32_t w = 1; w < threads; ++w) {
    workers.emplace_back([&, w] {
      for (uint32_t l = w; l < task_count; l += threads) build(l), add_coarse(l);
    });
  }
  for (uint32_t l = 0; l < task_count; l += threads) build(l), add_coarse(l);
  workers.clear();  // joined: every slot is written
  return plan;
}

void CgApp::NoteBlocks(const Blocks& blocks, const Shares& shares,
                       std::vector<std::string>& notes) const {
  const auto& own = blocks.part.rows;
  if (blocks.metis || blocks.layers > 0 || !shares.empty()) {
    size_t smallest = own[0].size(), largest = 0, extended = 0;
    for (size_t l = 0; l < own.size(); ++l) {
      smallest = std::min(smallest, own[l].size());
      largest = std::max(largest, own[l].size());
      extended = std::max(extended, blocks.rows[l].size());
    }
    notes.push_back(
        "cg: " + std::string(blocks.metis ? "METIS" : "contiguous") + " partition into " +
        std::to_string(own.size()) + " blocks of " + std::to_string(smallest) + " to " +
        std::to_string(largest) + " rows, at most " + std::to_string(extended) + " with overlap " +
        std::to_string(blocks.layers) + (blocks.auto_layers ? " (auto)" : "") +
        (chain_ && blocks.slab > 0 ? " (" + std::to_string(blocks.slab) + " rows either side)"
                                   : ""));
  }
  if (!shares.empty()) return;  // (the rest once: Reweigh's split follows Prepare's)
  if (predicted_ && predicted_->iterated()) {
    // (WillIterate predicts only when one of these is "auto".)
    std::string chosen;
    if (params_->overlap < 0 && !params_->iterated_with_amg())
      chosen = "overlap " + std::to_string(blocks.layers);
    if (coarse_ && params_->coarse_pieces < 0) {
      chosen += (chosen.empty() ? "" : " and ") + std::to_string(blocks.coarse_pieces) +
                " coarse pieces per coupling";
    }
    notes.push_back(
        "cg: the largest block (" + std::to_string(predicted_->rows) + " rows with " +
        std::to_string(predicted_->layers) + " layers of overlap) would fill " +
        FormatDouble(predicted_->fill) + "x its lower triangle with a Cholesky factor (more than " +
        FormatDouble(CgTask::kAutoMostFill) + "x): inner = \"auto\" will iterate the blocks" +
        (params_->iterated_with_amg() ? " with AMG" : "") + ", so " + chosen +
        " (auto, for two-stage blocks)");
  }
  if (coarse_) {
    notes.push_back(
        "cg: two-level: a coarse space of each task's constant and its block's responses to " +
        std::to_string(blocks.coarse_pieces) + " pieces of each coupling (coarse = \"" +
        params_->coarse + "\"); rows stay in their blocks while the job runs: no live balancing");
  }
  if (!chain_ && !coarse_) {
    const std::string why =
        blocks.metis ? "METIS blocks"
        : !bandwidth_
            ? "the matrix's pattern is not symmetric"
            : "a slice has no more rows than the bandwidth " + std::to_string(*bandwidth_) +
                  (blocks.slab > 0 ? " plus the overlap of " + std::to_string(blocks.slab) + " rows"
                                   : "");
    notes.push_back("cg: rows stay in their blocks while the job runs (" + why +
                    "): no live balancing");
  }
}

Result<app::JobPlan> CgApp::Split(const CgParams& p, uint32_t task_count, const Shares& shares,
                                  std::vector<std::string> notes) {
  AIAC_ASSIGN_OR_RETURN(Blocks blocks, PartitionBlocks(p, task_count, shares, notes));
  app::JobPlan plan = BuildPlan(p, blocks, shares);
  NoteBlocks(blocks, shares, notes);
  owned_ = std::move(blocks.part.rows);
  plan.notes = std::move(notes);
  return plan;
}

Result<std::unique_ptr<app::Task>> CgApp::MakeTask(const app::JobParams& params, uint32_t task,
                                                   std::string_view slice) {
  AIAC_ASSIGN_OR_RETURN(auto made, BuildTask(params, task, slice));
  if (params.logger) {
    std::string line = "cg: block of task " + std::to_string(task) + " built from a " +
                       std::to_string(slice.size()) + "-byte slice";
    if (const std::string notes = made->Notes(); !notes.empty()) line += " (" + notes + ")";
    params.logger->Debug(line);
  }
  return made;
}

Result<std::unique_ptr<app::Task>> CgApp::BuildTask(const app::JobParams& params, uint32_t task,
                                                    std::string_view slice) {
  AIAC_ASSIGN_OR_RETURN(auto p, ParseCgParams(params));
  if (p.daemon_builds_block()) {
    if (params.tasks < 1 || params.tasks > static_cast<uint32_t>(p.spec.n) ||
        task >= params.tasks) {
      return InvalidArgument("cg: task " + std::to_string(task) + " of " +
                             std::to_string(params.tasks) + " does not fit n");
    }
    // Equal slices unless the spawner sent their starts (Reweigh: daemons of unequal power).
    std::vector<int> starts;
    if (slice.empty()) {
      starts = Partition(p.spec.n, static_cast<int>(params.tasks));
    } else {
      AIAC_ASSIGN_OR_RETURN(auto sent,
                            DecodeSliceStarts(slice, p.spec.n, static_cast<int>(params.tasks)));
      starts = std::move(sent);
    }
    const double rows = starts[task + 1] - starts[task];
    AIAC_RETURN_IF_ERROR(CheckFitsInMemory(
        "cg: block " + std::to_string(task) + " (" +
            std::to_string(starts[task + 1] - starts[task]) + " rows)",
        rows * (2.0 * p.spec.bandwidth + 1) * kBytesPerEntry + rows * kBytesPerRow));
    // Rows can move between neighbours while every block is wider than the bandwidth
    // (row_moves.h); all tasks see the same starts, so they agree.
    std::optional<MovableRows> movable;
    if (SlicesCanMove(p.spec.bandwidth, starts)) {
      movable = MovableRows{p.spec.n, p.spec.bandwidth, params.tasks, task, p.spec, 0, 0};
    }
    Block block = GeneratedBlock(p.spec, starts, task);
    return NewCgTask(std::move(block), p, std::move(movable));
  }
  std::optional<CoarseSetup> coarse;
  if (IsCoarseSlice(slice)) {
    AIAC_ASSIGN_OR_RETURN(auto unwrapped, DecodeCoarseSlice(slice));
    if (task >= params.tasks)
      return InvalidArgument("cg: task " + std::to_string(task) + " of " +
                             std::to_string(params.tasks));
    coarse = CoarseSetup{task, params.tasks, unwrapped.first};
    slice = unwrapped.second;
  }
  std::optional<int> bandwidth;  // set: the rows of this slice of a file's matrix may move
  int overlap = 0;
  if (IsMovableSlice(slice)) {
    AIAC_ASSIGN_OR_RETURN(auto movable, DecodeMovableSlice(slice));
    bandwidth = movable.bandwidth;
    overlap = movable.overlap;
    slice = movable.slice;
  }
  auto block = [&]() -> Result<Block> {
    if (!IsBlockOutline(slice)) return DecodeBlock(slice);
    AIAC_ASSIGN_OR_RETURN(auto outline, DecodeBlockOutline(slice));
    return BuildBlockFromCache(std::move(outline));
  }();
  if (!block.ok()) return block.status();
  if (!bandwidth) return NewCgTask(std::move(*block), p, std::nullopt, coarse);
  if (coarse) return InvalidArgument("cg: the rows of a two-level job cannot move");
  const std::vector<int>& rows = block->rows;
  const std::vector<int>& own = block->own;
  const bool neighbours_only = std::all_of(
      block->in.begin(), block->in.end(),
      [&](const Block::Coupling& c) { return c.task + 1 == task || c.task == task + 1; });
  const int lo = own.empty() ? 0 : rows[own.front()], hi = own.empty() ? 0 : rows[own.back()] + 1;
  if (own.empty() || rows.back() - rows.front() + 1 != block->size() ||
      hi - lo != static_cast<int>(own.size()) ||
      std::pair(rows.front(), rows.back() + 1) != SlabRows(block->n, lo, hi, overlap) ||
      task >= params.tasks || !neighbours_only) {
    return InvalidArgument(
        "cg: the block of task " + std::to_string(task) + " is not the slab of a slice of " +
        "consecutive rows that uses only its neighbours' rows: its rows cannot move");
  }
  MovableRows movable{block->n, *bandwidth, params.tasks, task, std::nullopt, lo, hi, overlap};
  return NewCgTask(std::move(*block), p, std::move(movable));
}

Result<app::GatherReport> CgApp::Gather(const app::JobParams& params,
                                        const std::vector<std::string>& slices) {
  if (!params_) return InvalidArgument("cg: Gather before Prepare");
  const CgParams* p = &*params_;
  const int n = static_cast<int>(A().rows());
  Eigen::VectorXd x = Eigen::VectorXd::Constant(n, std::nan(""));
  if (slices.size() != owned_.size()) {
    return Corruption("cg: " + std::to_string(slices.size()) + " results for " +
                      std::to_string(owned_.size()) + " tasks");
  }
  // Slices of consecutive rows may have moved while the job ran (row_moves.h): each result says
  // where its rows start, and together they must cover every row once.
  const bool moved_rows = p->daemon_builds_block() || chain_;
  std::vector<bool> seen(moved_rows ? static_cast<size_t>(n) : 0, false);
  for (size_t l = 0; l < slices.size(); ++l) {
    const std::string& s = slices[l];
    int32_t head[2] = {-1, -1};  // count, first row
    if (s.size() >= sizeof head) std::memcpy(head, s.data(), sizeof head);
    const auto count = static_cast<size_t>(std::max(0, head[0]));
    const bool fits = s.size() >= sizeof head && head[0] >= 0 &&
                      s.size() == sizeof head + count * sizeof(double) &&
                      (moved_rows ? head[1] >= 0 && head[1] + static_cast<int64_t>(count) <= n
                                  : count == owned_[l].size());
    if (!fits)
      return Corruption("cg: result of task " + std::to_string(l) + " does not fit its rows");
    const char* values = s.data() + sizeof head;
    for (size_t k = 0; k < count; ++k) {
      const int row = moved_rows ? head[1] + static_cast<int>(k) : owned_[l][k];
      if (moved_rows) {
        if (seen[static_cast<size_t>(row)]) {
          return Corruption("cg: row " + std::to_string(row + 1) +
                            " is in the results of two tasks");
        }
        seen[static_cast<size_t>(row)] = true;
      }
      std::memcpy(&x[row], values + k * sizeof(double), sizeof(double));
    }
  }
  if (auto gap = std::find(seen.begin(), seen.end(), false); gap != seen.end()) {
    return Corruption("cg: row " + std::to_string(gap - seen.begin() + 1) +
                      " is in no task's result");
  }
  app::GatherReport report;
  const double b_norm = problem_.b.norm();
  const double r_norm = (problem_.b - A() * x).norm();
  report.residual = b_norm > 0 ? r_norm / b_norm : r_norm;  // NaN if a row was never sent
  report.residual_target = p->residual_tolerance;
  if (!std::isfinite(report.residual)) {
    report.status = app::GatherStatus::kDiverged;
    report.error = "the gathered solution has non-finite entries";
  } else if (report.residual > p->residual_tolerance) {
    report.status = app::GatherStatus::kUnconverged;
    report.error = "residual " + FormatDouble(report.residual) + " is above residual_tolerance " +
                   FormatDouble(p->residual_tolerance);
  }
  if (p->generated)
    report.numbers["error_inf"] = (x - Eigen::VectorXd::Ones(n)).cwiseAbs().maxCoeff();
  if (!p->output.empty()) {
    // (In the file's numbering: renumbered rows go back to their places.)
    std::vector<double> out(x.data(), x.data() + n);
    for (int i = 0; i < n && !order_.empty(); ++i)
      out[static_cast<size_t>(order_[static_cast<size_t>(i)])] = x[i];
    AIAC_RETURN_IF_ERROR(WriteMatrixMarketVector(p->output, out));
    report.output = p->output;
  }
  return report;
}
}  // namespace aiac::cg
