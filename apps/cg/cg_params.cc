#include "apps/cg/cg_params.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <set>

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
  AIAC_RETURN_IF_ERROR(
      GetDouble(params, "residual_tolerance", 0, 1, "in (0, 1)", p.residual_tolerance));
  AIAC_RETURN_IF_ERROR(GetChoice(params, "inner", {"auto", "direct", "cg"},
                                 "\"auto\", \"direct\" or \"cg\"", p.inner));
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
  return Status::Ok();
}

}  // namespace

Result<CgParams> ParseCgParams(const app::JobParams& params) {
  static const std::set<std::string> kKnown = {"n",
                                               "bandwidth",
                                               "seed",
                                               "matrix",
                                               "rhs",
                                               "tolerance",
                                               "stable_iterations",
                                               "output",
                                               "residual_tolerance",
                                               "inner",
                                               "matrix_cache",
                                               "partition",
                                               "overlap",
                                               "shared_input",
                                               "inner_tolerance"};
  for (const auto& [key, value] : params.values) {
    if (!kKnown.count(key)) return InvalidArgument("cg: unknown parameter params." + key);
  }
  CgParams p;
  AIAC_RETURN_IF_ERROR(ParseSystem(params, p));
  if (auto* s = params.Find("output")) p.output = Resolve(params.base_dir, *s);
  AIAC_RETURN_IF_ERROR(ParseSolver(params, p));
  AIAC_RETURN_IF_ERROR(ParseSplitting(params, p));
  return p;
}

}  // namespace aiac::cg
