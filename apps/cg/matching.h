// A row permutation that puts large entries on the diagonal of a square sparse matrix, for
// systems whose diagonal has zeros (docs/user-guide.md): block Jacobi needs nonsingular diagonal
// blocks, and a zero-free diagonal of large entries is what makes them so in practice.
//
// The maximum product transversal of Duff and Koster ("On algorithms for permuting large
// entries to the diagonal of a sparse matrix", SIAM J. Matrix Anal. Appl. 22(4), 2001; HSL's
// MC64, job 5): among the permutations that give a zero-free diagonal, one that maximises the
// product of the diagonal's magnitudes. With c(i, j) = log(max_k |a_kj|) - log|a_ij| >= 0 it is a
// minimum-cost perfect matching of rows to columns, found column by column by shortest
// augmenting paths (Dijkstra on reduced costs, with row and column duals kept so that every
// reduced cost stays non-negative: section 4 of the paper). Only rows move, so PA x = Pb has the
// solution of A x = b: nothing is undone on output.
//
// Pure; O(n (m + n) log n) at worst for m entries, about one short search per column in practice.
#pragma once

#include <vector>

#include "apps/cg/cg_problem.h"
#include "core/status.h"

namespace aiac::cg {

// perm, where row j of the permuted matrix is row perm[j] of `a`: (PA)(j, j) = a(perm[j], j) is
// nonzero for every j, and the product of those |a(perm[j], j)| is the largest any such
// permutation gives. InvalidArgument when `a` is not square, or structurally singular (no
// permutation gives a zero-free diagonal), naming a column that cannot be matched.
Result<std::vector<int>> LargeDiagonalRows(const SpRef& a);

// `a`'s rows in the order `perm` gives (row j of the result is row perm[j] of `a`).
SpMat PermuteRows(const SpRef& a, const std::vector<int>& perm);

}  // namespace aiac::cg
