#include "redistribution/lp.h"

#include <glpk.h>

#include <cmath>
#include <memory>

namespace aiac::redistribution {
namespace {

int BoundType(double lo, double hi) {
  const bool has_lo = std::isfinite(lo), has_hi = std::isfinite(hi);
  if (has_lo && has_hi) return lo == hi ? GLP_FX : GLP_DB;
  if (has_lo) return GLP_LO;
  if (has_hi) return GLP_UP;
  return GLP_FR;
}

}  // namespace

Result<LpSolution> Minimize(const LinearProgram& lp) {
  glp_term_out(GLP_OFF);
  std::unique_ptr<glp_prob, void (*)(glp_prob*)> prob(glp_create_prob(), glp_delete_prob);
  glp_set_obj_dir(prob.get(), GLP_MIN);
  const int n = static_cast<int>(lp.objective.size());
  const int m = static_cast<int>(lp.rows.size());
  if (n > 0) glp_add_cols(prob.get(), n);
  if (m > 0) glp_add_rows(prob.get(), m);
  for (int j = 0; j < n; ++j) {
    const double lo = lp.lower[j], hi = lp.upper[j];
    glp_set_col_bnds(prob.get(), j + 1, BoundType(lo, hi), std::isfinite(lo) ? lo : 0,
                     std::isfinite(hi) ? hi : 0);
    glp_set_obj_coef(prob.get(), j + 1, lp.objective[j]);
  }
  std::vector<int> ia{0}, ja{0};
  std::vector<double> ar{0};
  for (int i = 0; i < m; ++i) {
    const auto& row = lp.rows[i];
    glp_set_row_bnds(prob.get(), i + 1, BoundType(row.lower, row.upper),
                     std::isfinite(row.lower) ? row.lower : 0,
                     std::isfinite(row.upper) ? row.upper : 0);
    for (const auto& [var, coef] : row.terms) {
      ia.push_back(i + 1);
      ja.push_back(var + 1);
      ar.push_back(coef);
    }
  }
  glp_load_matrix(prob.get(), static_cast<int>(ia.size()) - 1, ia.data(), ja.data(), ar.data());
  glp_smcp params;
  glp_init_smcp(&params);
  params.msg_lev = GLP_MSG_OFF;
  params.presolve = GLP_ON;
  params.meth = lp.method == LinearProgram::Method::kDual ? GLP_DUALP : GLP_PRIMAL;
  const int rc = glp_simplex(prob.get(), &params);
  if (rc == GLP_ENOPFS) return InvalidArgument("linear program is infeasible");
  if (rc == GLP_ENODFS) return InvalidArgument("linear program is unbounded");
  if (rc != 0) return Internal("GLPK simplex failed with code " + std::to_string(rc));
  const int status = glp_get_status(prob.get());
  if (status == GLP_NOFEAS || status == GLP_INFEAS)
    return InvalidArgument("linear program is infeasible");
  if (status == GLP_UNBND) return InvalidArgument("linear program is unbounded");
  if (status != GLP_OPT)
    return Internal("GLPK found no optimum (status " + std::to_string(status) + ")");
  LpSolution out;
  out.objective = glp_get_obj_val(prob.get());
  out.x.resize(n);
  for (int j = 0; j < n; ++j) out.x[j] = glp_get_col_prim(prob.get(), j + 1);
  return out;
}

}  // namespace aiac::redistribution
