#include "apps/cg/cg_params.h"

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

Result<CgParams> ParseCgParams(const app::JobParams& params) {
  static const std::set<std::string> kKnown = {"n",
                                               "bandwidth",
                                               "seed",
                                               "matrix",
                                               "rhs",
                                               "tolerance",
                                               "stable_iterations",
                                               "inner_tolerance",
                                               "output",
                                               "residual_tolerance",
                                               "inner",
                                               "matrix_cache",
                                               "partition",
                                               "overlap",
                                               "shared_input"};
  CgParams p;
  for (const auto& [key, value] : params.values) {
    if (!kKnown.count(key)) return InvalidArgument("cg: unknown parameter params." + key);
  }
  const bool has_matrix = params.Find("matrix") != nullptr;
  const bool has_n = params.Find("n") != nullptr;
  if (has_matrix == has_n) {
    return InvalidArgument(
        "cg: give either params.matrix (a Matrix Market file) or params.n (with bandwidth and "
        "seed)");
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
    if (bw < 0 || bw >= p.spec.n + (p.spec.n == 1))
      return InvalidArgument("cg: params.bandwidth must be in 0..n-1");
    p.spec.bandwidth = static_cast<int>(bw);
    p.spec.seed = static_cast<uint64_t>(seed);
    if (params.Find("rhs")) return InvalidArgument("cg: params.rhs goes with params.matrix");
  } else {
    for (const char* k : {"bandwidth", "seed"}) {
      if (params.Find(k))
        return InvalidArgument(std::string("cg: params.") + k + " goes with params.n");
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
    if (*v <= 0 || *v >= 1)
      return InvalidArgument("cg: params.residual_tolerance must be in (0, 1)");
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
  if (auto* s = params.Find("stable_iterations")) {
    auto v = ParseInt("stable_iterations", *s);
    if (!v.ok()) return v.status();
    if (*v < 1 || *v > 1000)
      return InvalidArgument("cg: params.stable_iterations must be in 1..1000");
    p.stable_iterations = static_cast<int>(*v);
  }
  return p;
}

}  // namespace aiac::cg
