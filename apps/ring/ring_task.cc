#include "apps/ring/ring_task.h"

namespace aiac::ring {

RingTask::RingTask(uint32_t task, uint32_t count, uint64_t rounds)
    : task_(task), count_(count), rounds_(rounds) {
  AIAC_CHECK(count >= 2 && task < count && rounds >= 1);
}

std::optional<RingTask::Token> RingTask::Start() {
  if (task_ != 0) return std::nullopt;
  value_ = 1;
  return Token{value_, 1};
}

std::optional<RingTask::Token> RingTask::OnToken(uint64_t value, uint64_t iteration) {
  // Token k (k = 1..rounds) reaches every task once, in order; anything else is a copy.
  if (done() || iteration != iterations_ + 1) return std::nullopt;
  ++iterations_;
  value_ = value;
  if (task_ == 0) {
    if (done()) return std::nullopt;  // the last round came home: stop the ring
    value_ = value + 1;
    return Token{value_, iteration + 1};
  }
  value_ = value + 1;
  return Token{value_, iteration};
}

}  // namespace aiac::ring
