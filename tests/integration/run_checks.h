// What the fault tests read from a run: the spawner's log (checkpoint counts, occurrences of a
// line) and the solution a CG run wrote, against the direct solve of its generated system.
#pragma once

#include <Eigen/SparseCholesky>
#include <algorithm>
#include <cmath>
#include <limits>
#include <regex>
#include <string>

#include "apps/cg/cg_problem.h"
#include "apps/cg/matrix_market.h"

namespace aiac::testing {

// The largest checkpoint count of the spawner's progress lines ("..., checkpoints 58").
inline int MaxCheckpoints(const std::string& log) {
  int most = 0;
  std::regex re("moves [0-9]+, checkpoints ([0-9]+)");
  for (std::sregex_iterator it(log.begin(), log.end(), re), end; it != end; ++it)
    most = std::max(most, std::stoi((*it)[1]));
  return most;
}

// How many times `what` occurs in `text`.
inline size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The largest difference between the solution a run wrote to `path` and the direct solution of
// the generated system `spec` (infinity when the file cannot be read).
inline double DistanceToTheDirectSolution(const std::string& path, const cg::GeneratedSpec& spec) {
  auto x = cg::ReadMatrixMarketVector(path);
  if (!x.ok()) return std::numeric_limits<double>::infinity();
  cg::Problem p = cg::Generate(spec);
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> direct(Eigen::SparseMatrix<double>(p.a));
  Eigen::VectorXd exact = direct.solve(p.b);
  if (static_cast<Eigen::Index>(x->size()) != exact.size())
    return std::numeric_limits<double>::infinity();
  double diff = 0;
  for (Eigen::Index i = 0; i < exact.size(); ++i)
    diff = std::max(diff, std::abs((*x)[static_cast<size_t>(i)] - exact[i]));
  return diff;
}

}  // namespace aiac::testing
