// The built-in `ring` app: a token carrying a counter goes round the tasks 0 -> 1 -> ... -> n-1
// -> 0 for `rounds` rounds, each task adding one. It checks the whole chain — assignment,
// direct daemon-to-daemon links, ordering, result gathering — with an answer known in advance:
// task 0 ends holding rounds x n, and every task has handled `rounds` tokens.
//
// Pure state machine: no I/O. The daemon feeds it tokens and sends what it returns.
#pragma once

#include <cstdint>
#include <optional>

#include "core/status.h"

namespace aiac::ring {

class RingTask {
 public:
  // Requires task < count, count >= 2, rounds >= 1.
  RingTask(uint32_t task, uint32_t count, uint64_t rounds);

  // A token to send to the successor: its value and sequence number (the iteration).
  struct Token {
    uint64_t value;
    uint64_t iteration;
  };

  // Task 0 emits the first token; the others emit nothing.
  std::optional<Token> Start();
  // Handles a token from the predecessor. A token whose iteration is not the next expected one
  // (a duplicate or stale copy) is ignored and nullopt returned.
  std::optional<Token> OnToken(uint64_t value, uint64_t iteration);

  bool done() const { return iterations_ == rounds_; }
  uint64_t iterations() const { return iterations_; }
  uint64_t value() const { return value_; }
  uint32_t successor() const { return (task_ + 1) % count_; }
  // The value task 0 must end with.
  static uint64_t Expected(uint32_t count, uint64_t rounds) { return count * rounds; }

 private:
  uint32_t task_, count_;
  uint64_t rounds_;
  uint64_t iterations_ = 0;  // tokens received
  uint64_t value_ = 0;
};

}  // namespace aiac::ring
