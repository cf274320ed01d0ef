#include "apps/cg/cg_params.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <set>

#include "apps/cg/coarse_space.h"
#include "core/config.h"

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

}  // namespace

namespace {

// A parameter that must be a number, in (lo, hi) (open ends) when given.
Status GetDouble(const app::JobParams& params, const std::string& key, double lo, double hi,
                 const std::string& range, double& out) {
  const std::string* s = params.Find(key);
  if (!s) return Status::Ok();
  AIAC_ASSIGN_OR_RETURN(const double v, ParseDouble(key, *s));
  if (v <= lo || v >= hi) return InvalidArgument("cg: params." + key + " must be " + range);
  out = v;
  return Status::Ok();
}

// One of `choices`, when given.
Status GetChoice(const app::JobParams& params, const std::string& key,
                 const std::set<std::string>& choices, const std::string& message,
                 std::string& out) {
  const std::string* s = params.Find(key);
  if (!s) return Status::Ok();
  if (!choices.count(*s)) return InvalidArgument("cg: params." + key + " must be " + message);
  out = *s;
  return Status::Ok();
}

// The system: generated (n, bandwidth, seed) or read (matrix, rhs).
Status ParseSystem(const app::JobParams& params, CgParams& p) {
  const bool has_matrix = params.Find("matrix") != nullptr;
  const bool has_n = params.Find("n") != nullptr;
  if (has_matrix == has_n) {
    return InvalidArgument(
        "cg: give either params.matrix (a Matrix Market file) or params.n (with bandwidth and "
        "seed)");
  }
  p.generated = has_n;
  if (!has_n) {
    for (const char* k : {"bandwidth", "seed"}) {
      if (params.Find(k))
        return InvalidArgument(std::string("cg: params.") + k + " goes with params.n");
    }
    p.matrix = Resolve(params.base_dir, *params.Find("matrix"));
    if (auto* s = params.Find("rhs")) p.rhs = Resolve(params.base_dir, *s);
    return Status::Ok();
  }
  AIAC_ASSIGN_OR_RETURN(const int64_t n, ParseInt("n", *params.Find("n")));
  if (n < 1 || n > 100000000) return InvalidArgument("cg: params.n must be in 1..100000000");
  p.spec.n = static_cast<int>(n);
  int64_t bw = std::min<int64_t>(8, p.spec.n - 1), seed = 1;  // default: 8, or less for tiny n
  if (auto* s = params.Find("bandwidth")) {
    AIAC_ASSIGN_OR_RETURN(bw, ParseInt("bandwidth", *s));
  }
  if (auto* s = params.Find("seed")) {
    AIAC_ASSIGN_OR_RETURN(seed, ParseInt("seed", *s));
  }
  if (bw < 0 || bw >= p.spec.n + (p.spec.n == 1))
    return InvalidArgument("cg: params.bandwidth must be in 0..n-1");
  p.spec.bandwidth = static_cast<int>(bw);
  p.spec.seed = static_cast<uint64_t>(seed);
  if (params.Find("rhs")) return InvalidArgument("cg: params.rhs goes with params.matrix");
  return Status::Ok();
}

// The local test and the block solver.
Status ParseSolver(const app::JobParams& params, CgParams& p) {
  AIAC_RETURN_IF_ERROR(GetDouble(params, "tolerance", 0, HUGE_VAL, "positive", p.tolerance));
  AIAC_RETURN_IF_ERROR(GetDouble(params, "inner_tolerance", 0, 1, "in (0, 1)", p.inner_tolerance));
  if (const std::string* s = params.Find("inner_reduction"); s && *s != "auto") {
    AIAC_ASSIGN_OR_RETURN(const double v, ParseDouble("inner_reduction", *s));
    if (!(v >= 0 && v < 1))
      return InvalidArgument("cg: params.inner_reduction must be \"auto\" or in [0, 1)");
    p.inner_reduction = v;
  }
  AIAC_RETURN_IF_ERROR(
      GetDouble(params, "residual_tolerance", 0, 1, "in (0, 1)", p.residual_tolerance));
  AIAC_RETURN_IF_ERROR(GetChoice(params, "inner", {"auto", "direct", "cg"},
                                 "\"auto\", \"direct\" or \"cg\"", p.inner));
  AIAC_RETURN_IF_ERROR(GetChoice(params, "inner_preconditioner", {"auto", "jacobi", "ic", "amg"},
                                 "\"auto\", \"jacobi\", \"ic\" or \"amg\"",
                                 p.inner_preconditioner));
  if (auto* s = params.Find("stable_iterations")) {
    AIAC_ASSIGN_OR_RETURN(const int64_t v, ParseInt("stable_iterations", *s));
    if (v < 1 || v > 1000)
      return InvalidArgument("cg: params.stable_iterations must be in 1..1000");
    p.stable_iterations = static_cast<int>(v);
  }
  return Status::Ok();
}

// How the rows are split, and how the daemons get their blocks.
Status ParseSplitting(const app::JobParams& params, CgParams& p) {
  AIAC_RETURN_IF_ERROR(GetChoice(params, "partition", {"auto", "metis", "contiguous"},
                                 "\"auto\", \"metis\" or \"contiguous\"", p.partition));
  if (auto* s = params.Find("overlap"); s && *s != "auto") {
    auto v = ParseInt("overlap", *s);
    if (!v.ok() || *v < 0 || *v > 100) {
      return InvalidArgument("cg: params.overlap must be \"auto\" or a number of layers in 0..100");
    }
    p.overlap = static_cast<int>(*v);
  }
  if (auto* s = params.Find("matrix_cache")) {
    if (*s != "true" && *s != "false")
      return InvalidArgument("cg: params.matrix_cache must be true or false");
    p.matrix_cache = *s == "true";
  }
  if (auto* s = params.Find("shared_input")) {
    if (*s != "auto" && *s != "true" && *s != "false") {
      return InvalidArgument("cg: params.shared_input must be \"auto\", true or false");
    }
    if (p.generated) return InvalidArgument("cg: params.shared_input goes with params.matrix");
    if (*s == "true" && !p.matrix_cache) {
      return InvalidArgument(
          "cg: params.shared_input = true needs matrix_cache (daemons read the matrix's cache)");
    }
    p.shared_input = *s;
  }
  AIAC_RETURN_IF_ERROR(GetChoice(params, "coarse", {"auto", "none", "harmonic"},
                                 "\"auto\", \"none\" or \"harmonic\"", p.coarse));
  if (p.coarse == "harmonic" && p.generated) {
    return InvalidArgument(
        "cg: params.coarse = \"harmonic\" goes with params.matrix (a generated system is "
        "strictly diagonally dominant: one level converges in a few iterations)");
  }
  if (auto* s = params.Find("coarse_pieces"); s && *s != "auto") {
    auto v = ParseInt("coarse_pieces", *s);
    if (!v.ok() || *v < 1 || *v > kMostCoarsePieces) {
      return InvalidArgument("cg: params.coarse_pieces must be \"auto\" or in 1.." +
                             std::to_string(kMostCoarsePieces));
    }
    p.coarse_pieces = static_cast<int>(*v);
  }
  if (auto* s = params.Find("coarse_wait")) {
    auto v = ParseDouble("coarse_wait", *s);
    if (!v.ok() || !(*v >= 0 && *v <= kMostCoarseWait)) {
      return InvalidArgument("cg: params.coarse_wait must be a number of block solves in 0.." +
                             std::to_string(static_cast<int>(kMostCoarseWait)));
    }
    p.coarse_wait = *v;
  }
  return Status::Ok();
}

}  // namespace

const std::vector<CgParamDoc>& CgParamDocs() {
  static const std::vector<CgParamDoc> docs = {
      {"n", "none",
       "generate A (n x n, symmetric, banded, strictly diagonally dominant) and b = A x "
       "ones; each daemon rebuilds its own block"},
      {"bandwidth", "min(8, n-1)", "with `n`: the generated A's half-bandwidth"},
      {"seed", "1", "with `n`: the seed of the generated A's entries"},
      {"matrix", "none",
       "or read A from a Matrix Market file (coordinate real, `general` or `symmetric`); "
       "the spawner splits it, and each task gets its block (sent, or built by its "
       "daemon: `shared_input`)"},
      {"rhs", "A x ones",
       "with `matrix`: b from a Matrix Market file (array, or coordinate n x 1)"},
      {"partition", "`auto`",
       "how rows are split into task blocks: `metis` (METIS k-way partition of the "
       "matrix graph, rows weighted by their stored entries), `contiguous` (equal slices "
       "of consecutive rows), `auto`: for a matrix from a file, slices when they already "
       "cut at most 2 % of its stored entries (a banded matrix: METIS could not do "
       "better, and takes 2 s on 800,000 rows), else slices of its rows renumbered in "
       "reverse Cuthill-McKee order when those cut at most 2 % (see below), else METIS; "
       "slices for a generated one (its daemons then build their own blocks)"},
      {"overlap", "`auto`",
       "layers of the matrix graph each block extends past its own rows (0..100), or "
       "`auto`: for a matrix from a file the most layers, up to 64, with which no block "
       "grows past 1.5x its own rows (at least 1), at most 2 when `inner = \"auto\"` will "
       "iterate the blocks with `inner_preconditioner = \"ic\"` or `\"jacobi\"` ([Inner "
       "solves](#inner-solves)); 0 for a generated one; see below. In "
       "slices of a symmetric pattern whose rows can move, each block is the slab of "
       "consecutive rows that holds those layers ([CG "
       "rows](balancing.md#live-balancing-run---balance))"},
      {"matrix_cache", "true",
       "with `matrix`: keep the parsed matrix in a binary file next to it, "
       "`FILE.aiac-csr`, and load that on the next run on the same file (see below)"},
      {"shared_input", "`auto`",
       "with `matrix`: `true` when the daemons see the spawner's files at the same paths "
       "(one host, a shared filesystem): each daemon builds its own block from the "
       "matrix's cache, and the spawner sends it only the block's outline (its rows, b, "
       "and who sends it what); `false`: the spawner sends every block; `auto`: `true` "
       "for a `--local` run. Needs `matrix_cache` (see below)"},
      {"coarse", "`auto`",
       "a second level for elliptic problems: `harmonic` adds a coarse space (per task, "
       "its rows' constant and its block's responses to each coupling's pieces) whose "
       "small problem every task solves, corrected in asynchronous rounds "
       "([Two-level](#two-level-coarse)); `none`: one level; `auto`: `harmonic` for a "
       "symmetric matrix from a file with 2..64 tasks and a row not diagonally dominant "
       "by 1 % (a discretised elliptic equation), else `none`. The rows of a two-level "
       "job do not move (`--balance` leaves them)"},
      {"coarse_pieces", "`auto`",
       "with `coarse`: pieces of each coupling between two blocks, each giving a coarse "
       "function (1..64), or `auto`: 8, and 4 when `inner = \"auto\"` will iterate the "
       "blocks (see [Inner solves](#inner-solves))"},
      {"coarse_wait", "4",
       "with `coarse`, asynchronous runs: a task that solved its block since it applied the "
       "last coarse round waits for that round's missing contributions, up to this many "
       "times its last block solve's duration, before it solves again without the round's "
       "correction; not for a peer that says it is locally converged, nor once converged "
       "itself; 0: never waits ([Two-level](#two-level-coarse))"},
      {"tolerance", "1e-8",
       "local convergence: max-norm change of a block over the block's max norm below "
       "this..."},
      {"stable_iterations", "3",
       "...for this many iterations in a row. Neighbour values that moved by less than "
       "`tolerance` x the block's max norm since its last solve wake no solve: a converged "
       "block falls quiet (see [Local convergence](#local-convergence))"},
      {"inner", "`auto`",
       "the block solver: `direct` factors each block once when its task is built "
       "(Cholesky in the block's own order when it is banded: LAPACK's band Cholesky "
       "(`dpbtrf`) when its band, rows x (bandwidth + 1), is at most twice its lower "
       "nonzeros, else Eigen's sparse one when its lower envelope is; otherwise "
       "CHOLMOD's, ordered by CHOLMOD (AMD, or METIS's nested dissection when AMD fills "
       "too much), factored supernodally; LU with pivoting by UMFPACK for unsymmetric "
       "blocks and for symmetric ones that are not positive definite; a rank-revealing QR "
       "by SuiteSparseQR, solving in the least-squares sense, for singular ones) and "
       "solves with the factor at every iteration; `cg` runs an inner CG at every "
       "iteration (`inner_preconditioner`; MINRES for a symmetric block that is not "
       "positive definite, BiCGSTAB for an unsymmetric one, both with Jacobi); `auto` factors when "
       "the predicted factor fits in memory "
       "and fills at most 8 times the block's lower triangle (a banded block's fill is "
       "about 1x, a 2-D grid's blocks 8-12x from 300 x 300 up, a 3-D grid's 50-120x), else "
       "iterates, two-stage, with the multigrid cycle. The run's notes say when a block is "
       "not positive definite or singular, and why `auto` iterated"},
      {"inner_tolerance", "1e-12",
       "relative residual of each block's inner CG (`inner = \"cg\"`, or `auto` without "
       "a factor)"},
      {"inner_preconditioner", "`auto`",
       "the inner CG's preconditioner: `jacobi`, `ic` (the block's zero-fill incomplete "
       "Cholesky factor, IC(0)), `amg` (one V-cycle of the block's smoothed-aggregation "
       "multigrid hierarchy), or `auto`: `amg` when `inner = \"auto\"` iterates, `jacobi` "
       "with `inner = \"cg\"`"},
      {"inner_reduction", "`auto`",
       "an iterated block solve also stops once it has cut its block's residual by this "
       "factor, a two-stage method (0: only at `inner_tolerance`); `auto`: 0.2 when `inner = "
       "\"auto\"` iterates, 0 with `inner = \"cg\"` ([Inner solves](#inner-solves))"},
      {"residual_tolerance", "1e-8",
       "`converged` only when norm(b - A x) / norm(b) of the gathered solution is at "
       "most this (see [While it runs](#while-it-runs))"},
      {"output", "none", "write x as a Matrix Market array file (relative to the job file)"},
  };
  return docs;
}

Result<CgParams> ParseCgParams(const app::JobParams& params) {
  std::set<std::string> known;
  for (const auto& doc : CgParamDocs()) known.insert(doc.key);
  for (const auto& [key, value] : params.values) {
    if (known.count(key)) continue;
    std::string message = "cg: unknown parameter params." + key;
    if (auto near = Nearest(key, known)) message += " (did you mean '" + *near + "'?)";
    return InvalidArgument(message);
  }
  CgParams p;
  AIAC_RETURN_IF_ERROR(ParseSystem(params, p));
  if (auto* s = params.Find("output")) p.output = Resolve(params.base_dir, *s);
  AIAC_RETURN_IF_ERROR(ParseSolver(params, p));
  AIAC_RETURN_IF_ERROR(ParseSplitting(params, p));
  return p;
}

}  // namespace aiac::cg
