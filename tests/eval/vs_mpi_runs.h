// One solve of vs_mpi (docs/results.md, "Versus MPI") on a platform aiac-emulate has up: aiac's
// CG job (`aiac-spawner run --platform P --emulation os --local`), or PETSc's KSPCG under mpirun
// with its ranks as the platform's nodes (`aiac-emulate rsh`). Whole-process wall time; the
// residual ||b - A x|| / ||b|| recomputed here from the solution file.
#pragma once

#include <Eigen/SparseCore>
#include <string>
#include <vector>

#include "apps/cg/cg_problem.h"

namespace aiac::eval {

struct System {
  std::string name;    // "banded-50k", "poisson2d-150", "poisson3d-25"
  std::string matrix;  // its Matrix Market file
  cg::SpMat a;
  Eigen::VectorXd b;  // A * ones, as both solvers take it
};

struct Solve {
  bool ok = false;
  double seconds = 0;
  double residual = -1;
  std::string detail;              // iterations, or why it failed
  std::vector<std::string> nodes;  // aiac: the nodes its tasks ran on (task order)
  std::string victim;              // aiac with a kill: the node killed
  double setup = 0;                // aiac: read + prepare + assign phases, seconds
};

// `v` with two decimals, as the tables print seconds and ratios.
std::string Fixed(double v);

// The residual of the solution in `file`; -1 when it cannot be read.
double ResidualOf(const System& s, const std::string& file);

// aiac's CG job on `tasks` tasks of the platform file `platform` (up with aiac-emulate): async or
// sync; with `kill_after` > 0 one task daemon is SIGKILLed that long after the tasks start.
Solve RunAiac(const std::string& dir, const std::string& tag, const System& s,
              const std::string& platform, int tasks, bool sync, double kill_after, uint64_t seed);

// PETSc under mpirun, one rank on each of `addresses`, with `options` (PETSc's) after the driver's
// arguments.
Solve RunPetsc(const std::string& dir, const std::string& tag, const System& s,
               const std::vector<std::string>& addresses, const std::string& subnet,
               const std::vector<std::string>& options);

}  // namespace aiac::eval
