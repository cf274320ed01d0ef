// The asynchronous coarse correction of the CG app's two-level method: what task l exchanges with
// every other task, and when it corrects its iterate. After Gbikpi-Benissan and Magoules,
// "Asynchronous multiplicative coarse-space correction" (2023), and Glusa, Boman, Chow,
// Rajamanickam and Szyld, SIAM J. Sci. Comput. 42(6), 2020: the coarse problem is replicated
// (every task solves it, no task is special, a replacement rebuilds it from the others), and its
// right-hand sides are built in rounds without anyone waiting.
//
// Setup, once per incarnation: each task sends everyone its number of functions and A Z_l on
// the rows of others (coarse_space.h); with those of every task, it computes its block row of
// A_0 = Z^T A Z and sends it; with every block row it has A_0. A task keeps sending what a
// peer's last message says it still lacks, so a replacement is set up again by the others.
//
// Rounds: r_0 = Z^T (b - A x) is the sum of one contribution per task, computed from its own
// rows only (A symmetric: (A Z)^T x sums over the rows each task owns). Task l sends its
// contribution to round k after each of its iterations (the newest replaces the last); when it
// holds round k's contribution of every task, it solves A_0 e = r_0 and goes on with round
// k + 1. The correction x + Z e reaches its block solve through the values it uses: it adds
// Z_m e_m to the values of each neighbour m that m sent before applying that round itself (the
// solve overwrites its own rows, so those need none): a multiplicative two-level step, the
// coarse correction followed by the block solves. A task behind (it missed a
// contribution of round k that a faster task had replaced) takes round k's solution from a
// message of round k + 1; a task restored from an old checkpoint joins the newest round.
//
// Called from the task's thread only. Pure: bytes in, bytes out.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "apps/cg/coarse_space.h"
#include "core/status.h"

namespace aiac::cg {

class CoarseRounds {
 public:
  // `own_rows`: the global rows task `task` owns, ascending, in the order of the basis' rows.
  // `sends`: per task that uses our values, the positions in own_rows of those values, in the
  // order they are sent: it gets Z_l there, to correct them.
  using Sends = std::vector<std::pair<uint32_t, std::vector<int>>>;
  CoarseRounds(uint32_t task, uint32_t tasks, CoarseBasis basis, std::vector<int> own_rows,
               Sends sends);

  // `optional`: the job chose the coarse space itself (coarse = "auto"): a coarse matrix that
  // turns out not to be positive semi-definite (A was symmetric but indefinite) then leaves the
  // task on one level (gave_up()) instead of failing it.
  void set_optional(bool optional) { optional_ = optional; }
  bool gave_up() const { return gave_up_; }

  // A peer's coarse section (SectionFor's bytes). A malformed one is refused (Corruption),
  // changing nothing.
  Status Absorb(uint32_t from, std::string_view section);

  // Before an iteration: goes as far as the absorbed sections allow (setup, rounds). True when a
  // correction is due (Correct it after the block solve): that is new input for the task.
  Result<bool> Advance();

  // Before the block solve: adds the due correction Z_m e_m to `inputs[k]`, the values used from
  // task `from[k]`, where m sent them before it applied this round, and clears it.
  void CorrectInputs(std::vector<Eigen::VectorXd>& inputs, const std::vector<uint32_t>& from);
  // The largest change the due correction makes to a row of ours (0: none due): how much it
  // matters to the local test.
  double DueChange() const;
  // After the block solve: this task's contribution to the current round, from its own rows
  // (`own`: their positions in x).
  void Contribute(const Eigen::VectorXd& x, const std::vector<int>& own);

  // Whether this task has contributed to the current round (Contribute since the last one).
  bool contributed() const { return problem_.has_value() && g_.has_value(); }

  // What peer `to` gets after this iteration; `converged`: this task is locally converged (a
  // peer then does not wait for its contributions: AwaitsWorkingPeers).
  std::string SectionFor(uint32_t to, bool converged = false);

  // Whether the current round lacks only contributions that are coming: this task has made its
  // own since it applied the last round, and every peer still missing said, in its last
  // section, that it is not locally converged (a converged task solves, and contributes, only
  // when its input changes). A task that solves again meanwhile does so without the round's
  // correction: on cores shared by more tasks than they have, such solves were about half of
  // all (docs/results.md), so the CG task waits for a while instead (CgParams::coarse_wait).
  bool AwaitsWorkingPeers() const;

  uint32_t task() const { return task_; }
  uint32_t tasks() const { return tasks_; }
  bool ready() const { return problem_.has_value(); }
  // A peer's last section says it still lacks what this task sends (A Z, a block row of A_0),
  // and the last section that went to it did not hold that (every section holds it until the
  // peer says it has it: a value may be replaced by the next before its receiver takes it,
  // runtime::Mailbox): a replacement, set up while the others had fallen quiet. The task must
  // iterate to send it.
  bool PeerNeedsSetup() const;
  // The coarse problem is being set up and no peer waits for this task's part
  // (!PeerNeedsSetup): what is missing is coming from the others. A task that solves meanwhile
  // makes one-level iterations, each sending sections of A Z as large as its interface to every
  // peer that lacks them (CgParams::coarse_wait).
  bool AwaitsSetup() const;
  uint64_t round() const { return round_; }
  // Rounds completed here (a correction applied), for the task's notes and tests.
  uint64_t corrections() const { return corrections_; }
  int functions() const { return basis_.size(); }
  // Functions of all tasks (0 until every task's count is known).
  int total_functions() const { return total_; }

 private:
  struct Peer {
    bool heard = false;
    int size = -1;           // its functions
    bool has_w = false;      // its A Z_m on our rows came
    std::vector<int> w_pos;  // positions in our own rows
    Eigen::MatrixXd w;       // A Z_m on them
    Eigen::MatrixXd z_in;    // Z_m on the values we use from it (none: empty)
    bool holds_w = false;    // it said it holds our A Z on its rows
    bool holds_row = false;  // it said it holds our block row of A_0
    bool sent_w = false;     // the last section to it held our A Z (so will the next ones)
    bool sent_row = false;   // and our block row
    bool gave_up = false;    // it said its A_0 was not positive semi-definite
    bool converged = false;  // it said it was locally converged
    std::optional<Eigen::MatrixXd> block_row;
    uint64_t round = 0;                     // of its newest contribution (0: none)
    Eigen::VectorXd g;                      // the contribution
    std::optional<Eigen::VectorXd> e_prev;  // its solution of round - 1
  };
  bool SetupDone() const;
  void Begin(const Eigen::VectorXd& e);

  uint32_t task_, tasks_;
  CoarseBasis basis_;
  std::vector<int> own_rows_;
  Sends sends_;
  std::vector<Peer> peers_;  // by task (ours unused)
  std::vector<int> offset_;  // first function of each task in A_0 (once all sizes are known)
  int total_ = 0;
  std::optional<Eigen::MatrixXd> block_row_;
  std::optional<CoarseProblem> problem_;
  uint64_t round_ = 0;
  std::optional<Eigen::VectorXd> g_;       // our contribution to round_
  std::optional<Eigen::VectorXd> e_prev_;  // the solution of round_ - 1
  std::optional<Eigen::VectorXd> due_;     // a solution still to apply, of round_ - 1
  uint64_t corrections_ = 0;
  bool optional_ = false;
  bool gave_up_ = false;
};

}  // namespace aiac::cg
