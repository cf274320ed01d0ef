#include "runtime/convergence.h"

#include <algorithm>

namespace aiac::runtime {

void ConvergenceDetector::Cancel() {
  if (!open_) return;
  open_ = false;
  ++cancelled_;
  std::fill(answered_.begin(), answered_.end(), false);
}

void ConvergenceDetector::OnLocal(uint32_t task, bool converged) {
  if (task >= converged_.size() || declared_) return;
  converged_[task] = converged;
  if (!converged) Cancel();
}

void ConvergenceDetector::OnAnswer(uint32_t task, uint64_t round, bool converged) {
  if (task >= converged_.size() || declared_ || !open_ || round != round_) return;  // stale round
  if (!converged) {
    converged_[task] = false;
    Cancel();
    return;
  }
  answered_[task] = true;
  if (std::all_of(answered_.begin(), answered_.end(), [](bool a) { return a; })) declared_ = true;
}

std::optional<uint64_t> ConvergenceDetector::RoundToOpen() {
  if (declared_ || open_) return std::nullopt;
  if (!std::all_of(converged_.begin(), converged_.end(), [](bool c) { return c; }))
    return std::nullopt;
  open_ = true;
  std::fill(answered_.begin(), answered_.end(), false);
  return ++round_;
}

void ConvergenceDetector::Withdraw(uint32_t task) {
  if (task >= converged_.size()) return;
  converged_[task] = false;
  declared_ = false;
  Cancel();
}

void ConvergenceDetector::Reset() {
  std::fill(converged_.begin(), converged_.end(), false);
  std::fill(answered_.begin(), answered_.end(), false);
  open_ = false;
  declared_ = false;
}

uint32_t ConvergenceDetector::converged_count() const {
  return static_cast<uint32_t>(std::count(converged_.begin(), converged_.end(), true));
}

}  // namespace aiac::runtime
