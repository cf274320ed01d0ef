// The peer the CG app is measured against (cg_vs_petsc, vs_mpi): what a user of this app would
// otherwise run. PETSc's KSPCG, by default with block Jacobi (one block per process, ICC(0)
// inside), stopping on the true relative residual ||b - A x|| / ||b|| <= RTOL as aiac's
// residual_tolerance does. PETSc options after the three arguments choose another
// preconditioner (vs_mpi: `-pc_type asm -pc_asm_overlap 1 -sub_pc_type cholesky`, `-pc_type
// gamg`).
//
//   mpiexec -n P petsc_cg_driver MATRIX.mtx RTOL SOLUTION.mtx [PETSc options]
//
// Every process reads the Matrix Market file (aiac's reader, so both sides parse at the same
// speed) and keeps PETSc's share of the rows; b = A * ones, as aiac's default. Rank 0 writes x
// to SOLUTION.mtx and prints one JSON line:
//   {"read": s, "assemble": s, "solve": s, "iterations": k, "residual": r, "reason": KSP reason}
#include <petscksp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "apps/cg/matrix_market.h"

namespace {

double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

PetscErrorCode Run(const char* matrix_path, double rtol, const char* solution_path) {
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  auto t0 = std::chrono::steady_clock::now();
  auto m = aiac::cg::ReadMatrixMarket(matrix_path);
  if (!m.ok()) {
    std::fprintf(stderr, "petsc_cg_driver: %s\n", m.status().message().c_str());
    return PETSC_ERR_FILE_READ;
  }
  const double read = Since(t0);

  // PETSc's share of the rows for this process, then its rows as CSR (global columns, duplicates
  // summed), handed to PETSc with its preallocation in one call.
  t0 = std::chrono::steady_clock::now();
  PetscInt n = m->rows, local = PETSC_DECIDE, end = 0;
  PetscCall(PetscSplitOwnership(PETSC_COMM_WORLD, &local, &n));
  PetscCallMPI(MPI_Scan(&local, &end, 1, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD));
  const PetscInt first = end - local;
  std::vector<aiac::cg::Triplet> mine;
  for (const auto& e : m->entries) {
    if (e.row >= first && e.row < end) mine.push_back(e);
  }
  m->entries = {};
  std::sort(mine.begin(), mine.end(), [](const auto& x, const auto& y) {
    return x.row != y.row ? x.row < y.row : x.col < y.col;
  });
  std::vector<PetscInt> ia(static_cast<size_t>(local) + 1, 0), ja;
  std::vector<PetscScalar> va;
  for (size_t k = 0; k < mine.size(); ++k) {
    if (!ja.empty() && k > 0 && mine[k].row == mine[k - 1].row && mine[k].col == mine[k - 1].col) {
      va.back() += mine[k].value;
      continue;
    }
    ja.push_back(mine[k].col);
    va.push_back(mine[k].value);
    ++ia[static_cast<size_t>(mine[k].row - first) + 1];
  }
  for (size_t r = 0; r < static_cast<size_t>(local); ++r) ia[r + 1] += ia[r];
  Mat a;
  PetscCall(MatCreate(PETSC_COMM_WORLD, &a));
  PetscCall(MatSetSizes(a, local, local, n, n));
  PetscCall(MatSetType(a, MATAIJ));
  PetscCall(MatSeqAIJSetPreallocationCSR(a, ia.data(), ja.data(), va.data()));
  PetscCall(MatMPIAIJSetPreallocationCSR(a, ia.data(), ja.data(), va.data()));
  PetscCall(MatSetOption(a, MAT_SPD, PETSC_TRUE));
  Vec x, b, ones, r;
  PetscCall(MatCreateVecs(a, &x, &b));
  PetscCall(VecDuplicate(b, &ones));
  PetscCall(VecDuplicate(b, &r));
  PetscCall(VecSet(ones, 1.0));
  PetscCall(MatMult(a, ones, b));
  const double assemble = Since(t0);

  t0 = std::chrono::steady_clock::now();
  KSP ksp;
  PC pc;
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, a, a));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED));
  PetscCall(KSPSetTolerances(ksp, rtol, 0.0, 1e30, 100000));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCBJACOBI));
  PetscBool sub_given = PETSC_FALSE;
  PetscCall(PetscOptionsHasName(nullptr, nullptr, "-sub_pc_type", &sub_given));
  if (!sub_given) PetscCall(PetscOptionsSetValue(nullptr, "-sub_pc_type", "icc"));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSolve(ksp, b, x));
  const double solve = Since(t0);
  PetscInt iterations;
  KSPConvergedReason reason;
  PetscCall(KSPGetIterationNumber(ksp, &iterations));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  PetscReal r_norm, b_norm;
  PetscCall(MatMult(a, x, r));
  PetscCall(VecAYPX(r, -1.0, b));
  PetscCall(VecNorm(r, NORM_2, &r_norm));
  PetscCall(VecNorm(b, NORM_2, &b_norm));

  // x on rank 0, written for the benchmark's own residual check.
  VecScatter to_zero;
  Vec all;
  PetscCall(VecScatterCreateToZero(x, &to_zero, &all));
  PetscCall(VecScatterBegin(to_zero, x, all, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(to_zero, x, all, INSERT_VALUES, SCATTER_FORWARD));
  if (rank == 0) {
    const PetscScalar* values;
    PetscCall(VecGetArrayRead(all, &values));
    const aiac::Status written =
        aiac::cg::WriteMatrixMarketVector(solution_path, std::vector<double>(values, values + n));
    PetscCall(VecRestoreArrayRead(all, &values));
    if (!written.ok()) {
      std::fprintf(stderr, "petsc_cg_driver: %s\n", written.message().c_str());
      return PETSC_ERR_FILE_WRITE;
    }
    std::printf(
        "{\"read\": %.4f, \"assemble\": %.4f, \"solve\": %.4f, \"iterations\": %d, \"residual\": "
        "%.6e, "
        "\"reason\": %d}\n",
        read, assemble, solve, static_cast<int>(iterations), static_cast<double>(r_norm / b_norm),
        static_cast<int>(reason));
  }
  PetscCall(VecScatterDestroy(&to_zero));
  PetscCall(VecDestroy(&all));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&ones));
  PetscCall(VecDestroy(&r));
  PetscCall(MatDestroy(&a));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: petsc_cg_driver MATRIX.mtx RTOL SOLUTION.mtx [PETSc options]\n");
    return 2;
  }
  PetscCall(PetscInitialize(&argc, &argv, nullptr, nullptr));
  const PetscErrorCode failed = Run(argv[1], std::atof(argv[2]), argv[3]);
  PetscCall(PetscFinalize());
  return failed == 0 ? 0 : 1;
}
