// A small linear-programming interface, solved by GLPK's simplex (docs/architecture.md, chosen
// dependencies): what ring System 2 and DistPM's LP (3) need, and nothing of GLPK in the callers'
// headers. Pure: no I/O (GLPK's terminal output is switched off), not thread-safe (GLPK keeps
// global state): call from one thread.
#pragma once

#include <limits>
#include <utility>
#include <vector>

#include "core/status.h"

namespace aiac::redistribution {

inline constexpr double kInfinity = std::numeric_limits<double>::infinity();

struct LinearProgram {
  // Variables x_0..x_{n-1}, each in [lower, upper] (use +-kInfinity for none).
  std::vector<double> objective;  // c: minimise c . x
  std::vector<double> lower, upper;
  struct Row {
    std::vector<std::pair<int, double>> terms;     // (variable, coefficient)
    double lower = -kInfinity, upper = kInfinity;  // lower <= a . x <= upper
  };
  std::vector<Row> rows;
  // Simplex variant; which is faster depends on the program's shape (measured in the benches:
  // System 2 solves 5.6x faster with the dual, DistPM's LP (3) 1.9x faster with the primal).
  enum class Method { kPrimal, kDual } method = Method::kPrimal;

  int AddVariable(double cost, double lo = 0, double hi = kInfinity) {
    objective.push_back(cost);
    lower.push_back(lo);
    upper.push_back(hi);
    return static_cast<int>(objective.size()) - 1;
  }
};

struct LpSolution {
  double objective = 0;
  std::vector<double> x;
};

// The optimum, or InvalidArgument when the program is infeasible or unbounded.
Result<LpSolution> Minimize(const LinearProgram& lp);

}  // namespace aiac::redistribution
