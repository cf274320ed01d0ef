// Sender-side logging of a synchronous run's values, so that a lost neighbour can be replaced
// (docs/fault-tolerance.md, "Synchronous runs"): a task restored from its checkpoint at
// iteration c computes iteration c + 1 from its neighbours' values of iteration c, which they
// sent long ago. Each sender keeps, per receiver, what it handed to the connection, and sends it
// all again on its next connection there (the receiver's mailbox drops what it already took): a
// replacement, or a refusal while the receiver's task was being set up, loses nothing.
//
// The log is trimmed when the receiver's checkpoints advance (TrimValues: every backup of the
// receiver holds iteration i, so no restore asks for values before i), and bounded: past its
// limit the oldest values go, and dropped_through() says up to where, so the spawner can tell a
// replacement it cannot feed from one it can. Pure: no I/O, no threads.
#pragma once

#include <cstdint>
#include <deque>
#include <string>

namespace aiac::daemon {

// A value for one neighbour, waiting for its connection or handed to it.
struct LinkValue {
  uint64_t iteration = 0;
  std::string bytes;
  bool converged = false;
  uint64_t seen = 0;              // the receiver's newest iteration we had absorbed...
  uint64_t seen_incarnation = 0;  // ...counted in this incarnation of it
};

class ValueLog {
 public:
  // `limit_bytes` 0: keeps nothing (asynchronous runs, or a synchronous one that does not
  // replace lost daemons).
  explicit ValueLog(uint64_t limit_bytes = 0) : limit_(limit_bytes) {}

  bool enabled() const { return limit_ > 0; }
  // `v` was handed to the connection. Past the limit the oldest values go (never `v` itself).
  void Sent(LinkValue v);
  // No restore of the receiver asks for values before iteration `before` any more.
  void Trim(uint64_t before);
  // A new connection to the receiver: every logged value goes back in front of `pending`, in
  // order, to be sent (and logged) again.
  void Replay(std::deque<LinkValue>& pending);

  // The highest iteration dropped for want of room (0: none): values up to it are gone for good.
  uint64_t dropped_through() const { return dropped_through_; }
  size_t size() const { return values_.size(); }
  uint64_t bytes() const { return bytes_; }

 private:
  void DropFront();

  uint64_t limit_;
  std::deque<LinkValue> values_;
  uint64_t bytes_ = 0;
  uint64_t dropped_through_ = 0;
};

}  // namespace aiac::daemon
