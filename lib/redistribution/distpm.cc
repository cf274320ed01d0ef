#include "redistribution/distpm.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

#include "redistribution/lp.h"

namespace aiac::redistribution {
namespace {

struct Sides {
  std::vector<int> over, under;
  std::vector<int64_t> excess, deficit;  // per entry of over / under
};

Sides Classify(const MigrationInput& in) {
  Sides s;
  for (int g = 0; g < static_cast<int>(in.groups.size()); ++g) {
    const int64_t d = std::llround(in.groups[g].load - in.groups[g].target);
    if (d > 0) {
      s.over.push_back(g);
      s.excess.push_back(d);
    } else if (d < 0) {
      s.under.push_back(g);
      s.deficit.push_back(-d);
    }
  }
  return s;
}

// Integer amounts from the LP's real ones with every row and column sum kept exact: floor each
// amount, then hand out the missing units as a 0/1 flow over the cells that had a fractional
// part (such a flow exists: the fractional parts themselves are a fractional one).
std::vector<std::vector<int64_t>> RoundKeepingSums(const std::vector<std::vector<double>>& x,
                                                   const std::vector<int64_t>& rows,
                                                   const std::vector<int64_t>& cols) {
  const size_t no = rows.size(), nu = cols.size();
  std::vector<std::vector<int64_t>> out(no, std::vector<int64_t>(nu));
  std::vector<std::vector<bool>> fractional(no, std::vector<bool>(nu));
  std::vector<int64_t> need_row(rows), need_col(cols);
  for (size_t i = 0; i < no; ++i) {
    for (size_t j = 0; j < nu; ++j) {
      double v = std::max(0.0, x[i][j]);
      const double nearest = std::round(v);
      if (std::abs(v - nearest) < 1e-6) v = nearest;  // solver noise around whole numbers
      out[i][j] = static_cast<int64_t>(std::floor(v));
      fractional[i][j] = v > static_cast<double>(out[i][j]);
      need_row[i] -= out[i][j];
      need_col[j] -= out[i][j];
    }
  }
  // Augmenting paths on the bipartite graph rows -> cols: first through fractional cells only
  // (capacity 1), then, if rounding noise left units over, through any cell.
  for (int phase = 0; phase < 2; ++phase) {
    std::vector<std::vector<int64_t>> added(no, std::vector<int64_t>(nu, 0));
    auto usable = [&](size_t i, size_t j) {
      return phase == 1 || (fractional[i][j] && added[i][j] == 0);
    };
    bool progress = true;
    while (progress) {
      progress = false;
      for (size_t start = 0; start < no; ++start) {
        if (need_row[start] <= 0) continue;
        // BFS over alternating paths: row -(usable)-> col -(added>0)-> row.
        std::vector<int> col_from(nu, -1), row_from(no, -1);
        std::vector<bool> row_seen(no, false);
        std::vector<size_t> queue{start};
        row_seen[start] = true;
        int end_col = -1;
        for (size_t q = 0; q < queue.size() && end_col < 0; ++q) {
          const size_t i = queue[q];
          for (size_t j = 0; j < nu && end_col < 0; ++j) {
            if (col_from[j] >= 0 || !usable(i, j)) continue;
            col_from[j] = static_cast<int>(i);
            if (need_col[j] > 0) {
              end_col = static_cast<int>(j);
              break;
            }
            for (size_t k = 0; k < no; ++k) {
              if (!row_seen[k] && added[k][j] > 0) {
                row_seen[k] = true;
                row_from[k] = static_cast<int>(j);
                queue.push_back(k);
              }
            }
          }
        }
        if (end_col < 0) continue;
        // Flip the path.
        int j = end_col;
        for (;;) {
          const int i = col_from[j];
          ++added[i][j];
          if (static_cast<size_t>(i) == start) break;
          const int prev = row_from[i];
          --added[i][prev];
          j = prev;
        }
        --need_row[start];
        --need_col[end_col];
        progress = true;
      }
    }
    for (size_t i = 0; i < no; ++i)
      for (size_t j = 0; j < nu; ++j) out[i][j] += added[i][j];
    if (std::all_of(need_row.begin(), need_row.end(), [](int64_t v) { return v == 0; })) break;
  }
  return out;
}

}  // namespace

Status CheckMigrationInput(const MigrationInput& in) {
  const size_t n = in.groups.size();
  if (n == 0) return InvalidArgument("no groups");
  double load = 0, target = 0;
  for (const auto& g : in.groups) {
    if (!std::isfinite(g.load) || !std::isfinite(g.target) || g.load < 0 || g.target < 0) {
      return InvalidArgument("group '" + g.name +
                             "': load and target must be non-negative numbers");
    }
    if (g.load != std::floor(g.load) || g.target != std::floor(g.target)) {
      return InvalidArgument("group '" + g.name +
                             "': load and target must be whole numbers of items");
    }
    load += g.load;
    target += g.target;
  }
  if (load != target) {
    return InvalidArgument("total load " + std::to_string(static_cast<int64_t>(load)) +
                           " != total target " + std::to_string(static_cast<int64_t>(target)));
  }
  for (const auto* m : {&in.alpha, &in.beta}) {
    const char* name = m == &in.alpha ? "alpha" : "beta";
    if (m->size() != n)
      return InvalidArgument(std::string(name) + " must be " + std::to_string(n) + " x " +
                             std::to_string(n));
    for (const auto& row : *m) {
      if (row.size() != n)
        return InvalidArgument(std::string(name) + " must be " + std::to_string(n) + " x " +
                               std::to_string(n));
      for (double v : row) {
        if (!std::isfinite(v) || v < 0)
          return InvalidArgument(std::string(name) + " has a negative or non-finite entry");
      }
    }
  }
  return Status::Ok();
}

double Makespan(const MigrationInput& in, const std::vector<Flow>& flows) {
  double worst = 0;
  for (const auto& f : flows) {
    if (f.amount > 0)
      worst = std::max(
          worst, in.alpha[f.from][f.to] + in.beta[f.from][f.to] * static_cast<double>(f.amount));
  }
  return worst;
}

MigrationPlan GreedyMigration(const MigrationInput& in) {
  Sides s = Classify(in);
  struct Channel {
    size_t i, j;
  };
  std::vector<Channel> channels;
  for (size_t i = 0; i < s.over.size(); ++i)
    for (size_t j = 0; j < s.under.size(); ++j) channels.push_back({i, j});
  // Section 5.1: the fastest channel first (per-item time, then latency), fed as much as
  // both of its ends allow.
  std::stable_sort(channels.begin(), channels.end(), [&](const Channel& a, const Channel& b) {
    const int ai = s.over[a.i], aj = s.under[a.j], bi = s.over[b.i], bj = s.under[b.j];
    if (in.beta[ai][aj] != in.beta[bi][bj]) return in.beta[ai][aj] < in.beta[bi][bj];
    return in.alpha[ai][aj] < in.alpha[bi][bj];
  });
  MigrationPlan plan;
  for (const auto& c : channels) {
    const int64_t amount = std::min(s.excess[c.i], s.deficit[c.j]);
    if (amount <= 0) continue;
    s.excess[c.i] -= amount;
    s.deficit[c.j] -= amount;
    plan.flows.push_back({s.over[c.i], s.under[c.j], amount});
  }
  std::sort(plan.flows.begin(), plan.flows.end(), [](const Flow& a, const Flow& b) {
    return std::tie(a.from, a.to) < std::tie(b.from, b.to);
  });
  plan.makespan = Makespan(in, plan.flows);
  return plan;
}

Result<MigrationPlans> PlanMigration(const MigrationInput& in) {
  MigrationPlans out;
  Sides s = Classify(in);
  out.overloaded = s.over;
  out.underloaded = s.under;
  out.greedy = GreedyMigration(in);
  if (s.over.empty()) return out;  // balanced: nothing to move
  // LP (3): variables T, then delta_ij row-major over O x U.
  LinearProgram lp;
  const int t = lp.AddVariable(1.0, 0.0);
  const size_t no = s.over.size(), nu = s.under.size();
  auto var = [&](size_t i, size_t j) { return 1 + static_cast<int>(i * nu + j); };
  for (size_t k = 0; k < no * nu; ++k) lp.AddVariable(0.0, 0.0);
  for (size_t i = 0; i < no; ++i) {
    for (size_t j = 0; j < nu; ++j) {
      const int gi = s.over[i], gj = s.under[j];
      // T >= alpha_ij + beta_ij delta_ij  <=>  T - beta_ij delta_ij >= alpha_ij, on every channel.
      lp.rows.push_back({{{t, 1.0}, {var(i, j), -in.beta[gi][gj]}}, in.alpha[gi][gj], kInfinity});
    }
  }
  for (size_t i = 0; i < no; ++i) {  // sum_j delta_ij = w_i - w'_i
    LinearProgram::Row row;
    for (size_t j = 0; j < nu; ++j) row.terms.push_back({var(i, j), 1.0});
    row.lower = row.upper = static_cast<double>(s.excess[i]);
    lp.rows.push_back(std::move(row));
  }
  for (size_t j = 0; j < nu; ++j) {  // sum_i delta_ij = w'_j - w_j
    LinearProgram::Row row;
    for (size_t i = 0; i < no; ++i) row.terms.push_back({var(i, j), 1.0});
    row.lower = row.upper = static_cast<double>(s.deficit[j]);
    lp.rows.push_back(std::move(row));
  }
  AIAC_ASSIGN_OR_RETURN(auto solution, Minimize(lp));
  std::vector<std::vector<double>> delta(no, std::vector<double>(nu));
  for (size_t i = 0; i < no; ++i)
    for (size_t j = 0; j < nu; ++j) delta[i][j] = solution.x[var(i, j)];
  const auto amounts = RoundKeepingSums(delta, s.excess, s.deficit);
  out.distpm.lp_objective = solution.objective;
  for (size_t i = 0; i < no; ++i)
    for (size_t j = 0; j < nu; ++j)
      if (amounts[i][j] > 0) out.distpm.flows.push_back({s.over[i], s.under[j], amounts[i][j]});
  out.distpm.makespan = Makespan(in, out.distpm.flows);
  return out;
}

}  // namespace aiac::redistribution
