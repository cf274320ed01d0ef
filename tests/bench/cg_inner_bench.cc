// Inner solve: our block CG against Eigen's ConjugateGradient (Jacobi preconditioner, full
// matrix, the same tolerance and start) on the same blocks, measured in the same run.
// Prints the speed ratio (target >= 1.0x). Run: build/bin/cg_inner_bench [rows bandwidth]
#include <Eigen/IterativeLinearSolvers>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "apps/cg/block_cg.h"

using namespace aiac::cg;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 50000;
  const int bw = argc > 2 ? std::atoi(argv[2]) : 12;
  Problem p = Generate({n, bw, 9});
  const double tol = 1e-12;
  const int reps = 5;

  double ours = 1e300, eigen = 1e300;
  int our_iters = 0, eigen_iters = 0;
  Eigen::VectorXd x_ours, x_eigen;
  // Setup (ours: preconditioner and symmetry check; Eigen: preconditioner) happens once per
  // task in a run, the solve once per outer iteration: time the solves.
  BlockCg solver(p.a);
  Eigen::ConjugateGradient<SpMat, Eigen::Lower | Eigen::Upper,
                           Eigen::DiagonalPreconditioner<double>>
      cg;
  cg.setTolerance(tol);
  cg.setMaxIterations(10 * n);
  cg.compute(p.a);
  for (int r = 0; r < reps; ++r) {  // best of `reps`, alternating, so neither gets a warmer cache
    x_ours = Eigen::VectorXd::Zero(n);
    auto t0 = Clock::now();
    our_iters = solver.Solve(p.b, x_ours, tol, 10 * n).iterations;
    ours = std::min(ours, std::chrono::duration<double>(Clock::now() - t0).count());

    t0 = Clock::now();
    x_eigen = cg.solve(p.b);
    eigen_iters = static_cast<int>(cg.iterations());
    eigen = std::min(eigen, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::printf("block %d rows, bandwidth %d, tolerance %g, best of %d\n", n, bw, tol, reps);
  std::printf("aiac BlockCg     %8.4f s  %4d iterations\n", ours, our_iters);
  std::printf("Eigen CG         %8.4f s  %4d iterations\n", eigen, eigen_iters);
  std::printf("max |x_aiac - x_eigen| = %.3e\n", (x_ours - x_eigen).cwiseAbs().maxCoeff());
  std::printf("speed ratio (Eigen time / aiac time): %.2fx (target >= 1.0x)\n", eigen / ours);
  return 0;
}
