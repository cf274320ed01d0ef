// The parameters of a CG job (the [params] of its job file), parsed once into CgParams: the
// spawner parses them in Prepare and keeps them for Reweigh and Gather; a daemon parses them when
// it makes its task. docs/user-guide.md, CG parameters, says what each one means.
#pragma once

#include <string>
#include <vector>

#include "app/app.h"
#include "apps/cg/cg_problem.h"

namespace aiac::cg {

// coarse_wait's default: 2-D and 3-D Poisson on 5 tasks sharing 2 cores took the least time
// from 4 up (docs/results.md, "Waiting for the coarse round").
inline constexpr double kDefaultCoarseWait = 4;
inline constexpr double kMostCoarseWait = 1000;

struct CgParams {
  bool generated = true;
  GeneratedSpec spec;
  std::string matrix, rhs, output;  // paths resolved against the job file's directory
  double tolerance = 1e-8;          // local test: max-norm change over the block's max-norm
  int stable_iterations = 3;
  double inner_tolerance = 1e-12;
  // An iterated block solve also stops once it has cut its residual by this factor (0: at
  // inner_tolerance only): the two-stage method (cg_task.h). -1 ("auto"): kAutoInnerReduction
  // when inner = "auto" iterates, 0 with inner = "cg".
  double inner_reduction = -1;
  // The inner CG's preconditioner: "jacobi", "ic" (incomplete_cholesky.h), "amg"
  // (smoothed_aggregation.h), or "auto" (AMG when inner = "auto" iterates, Jacobi with inner =
  // "cg").
  std::string inner_preconditioner = "auto";
  double residual_tolerance = 1e-8;  // "converged" only when ||b - A x|| / ||b|| is at most this
  // The block solver: "direct" factors each block once (block_direct.h), "cg" solves it
  // iteratively at every outer iteration (block_cg.h), "auto" factors it when the factor fits
  // in memory and the block allows it, else iterates.
  std::string inner = "auto";
  // Keep a binary copy of the parsed matrix next to its file (matrix_cache.h) and load it on the
  // next run on the same file.
  bool matrix_cache = true;
  // How rows are split into task blocks (partition.h): "metis", "contiguous", or "auto" (for a
  // matrix from a file: slices of consecutive rows when they cut at most kSlicesGoodEnough of its
  // entries, else slices of its rows renumbered in reverse Cuthill-McKee order when those do
  // (renumber.h), else METIS; slices for a generated banded one).
  std::string partition = "auto";
  // Layers of the matrix graph each block extends past its own rows; -1 ("auto"): AutoLayers
  // with kAutoOverlapGrowth and kAutoOverlapLayers for a matrix from a file (at most
  // kIteratedOverlapLayers when inner = "auto" will iterate its blocks with IC(0) or Jacobi), 0
  // for a generated one.
  int overlap = -1;
  // Whether daemons build their own blocks from the matrix file's binary cache (block_outline.h)
  // instead of receiving them: "true" when the job says the daemons see the spawner's files at
  // the same paths (one host, or a shared filesystem), "false", or "auto" (true for a --local
  // run). Needs matrix_cache; a run whose cache could not be written ships the blocks.
  std::string shared_input = "auto";
  // A second level (coarse_space.h): "harmonic", "none", or "auto" (harmonic for a symmetric
  // matrix from a file with 2..kMostCoarseTasks tasks that is not strongly diagonally dominant:
  // WantsCoarseSpace), and the pieces per coupling of its functions (-1: "auto", chosen with
  // the blocks: CgApp::PartitionBlocks).
  std::string coarse = "auto";
  int coarse_pieces = -1;
  // Asynchronous two-level runs: how many times its last block solve's duration a task that
  // solved since it applied the last coarse round waits for that round to complete before it
  // solves again without its correction (CoarseRounds::AwaitsWorkingPeers); 0: never waits.
  double coarse_wait = kDefaultCoarseWait;

  // Whether blocks inner = "auto" iterates are preconditioned by the multigrid cycle.
  bool iterated_with_amg() const {
    return inner_preconditioner == "auto" || inner_preconditioner == "amg";
  }
  bool metis() const { return partition == "metis" || (partition == "auto" && !generated); }
  // A generated system split in contiguous slices without overlap: each daemon builds its own
  // block from the parameters, nothing is shipped.
  bool daemon_builds_block() const { return generated && !metis() && overlap <= 0; }
};

// What one parameter is, for the docs' table (tools/options_doc.cc prints it) and for the
// check of unknown keys.
struct CgParamDoc {
  const char* key;
  const char* fallback;  // the default, as users read it
  const char* meaning;
};
const std::vector<CgParamDoc>& CgParamDocs();

// Every parameter checked, with one line naming the first problem ("cg: params.n must be ...");
// an unknown key is refused. Relative paths are resolved against the job file's folder.
Result<CgParams> ParseCgParams(const app::JobParams& params);

}  // namespace aiac::cg
