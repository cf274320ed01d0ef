// Incoming dependency values of one task, per neighbour, filled by the network thread and
// drained by the task's compute thread.
//
// Asynchronous mode keeps only the newest value per neighbour, by (incarnation, iteration): a
// neighbour restored from a checkpoint on another daemon runs under a higher incarnation and
// counts again from the checkpoint's iteration, and its values win over everything its dead
// predecessor sent; older or duplicated messages are dropped on arrival, and so is a newer
// iteration whose bytes are those the task already took (only its metadata is news).
// Synchronous mode keeps each iteration's value until it is taken, because a neighbour may run
// one iteration ahead; a value already taken, or sent again, is dropped, and a neighbour's new
// incarnation (restored from a checkpoint, sending its last values again) keeps what its old one
// sent and was not taken yet. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace aiac::runtime {

class Mailbox {
 public:
  explicit Mailbox(bool keep_every_iteration = false) : sync_(keep_every_iteration) {}

  // Returns false when the value was dropped (stale or duplicate; asynchronous: the newest value
  // sent again, or a newer one with the bytes last taken, only updates `sender_converged` and
  // `seen`). `sender_converged`: the sender was locally converged when it sent this value.
  // `seen`: the newest iteration of this task's own values that the sender had absorbed when it
  // computed this one (0: none), counted in this task's incarnation `seen_incarnation`: a count
  // of a previous owner of this task says nothing about what the sender saw of ours, and counts
  // as 0.
  bool Put(uint32_t from, uint64_t iteration, std::string bytes, bool sender_converged = false,
           uint64_t seen = 0, uint64_t incarnation = 1, uint64_t seen_incarnation = 1);

  struct Value {
    uint32_t from;
    uint64_t iteration;
    std::string bytes;
  };
  // Async: every neighbour's value newer than what was taken before, newest only.
  std::vector<Value> TakeNew();
  // Sync: waits up to `timeout` until every one of `from` has sent iteration `iteration`, then
  // takes those values. Returns nullopt on timeout or Close().
  std::optional<std::vector<Value>> TakeIteration(const std::vector<uint32_t>& from,
                                                  uint64_t iteration,
                                                  std::chrono::milliseconds timeout);
  // Waits up to `timeout` for any new value; true if one is there.
  bool WaitForNew(std::chrono::milliseconds timeout);
  // A count of what can change what an idle task would do next: a value accepted, a sender's
  // convergence or acknowledgement (`seen`) changed, Wake(). An idle runner reads it before its
  // step and waits for it to move (WaitForChange) instead of polling.
  uint64_t changes() const;
  // Waits up to `timeout` until changes() differs from `since`, or Close(); true if it does.
  bool WaitForChange(uint64_t since, std::chrono::milliseconds timeout);
  // Counts a change and wakes WaitForChange: something other than a value came for the task (a
  // command, a convergence query).
  void Wake();
  // True when a value waits untaken (TakeNew would return something) and one of the values
  // accepted since the last take came from a sender that was not locally converged: a change
  // the task has not absorbed yet, which may unsettle it. (A converged sender's new value
  // differs within its local test; tasks that all send to all, every iteration, nearly always
  // have such a value waiting.)
  bool HasNewFromUnconverged() const;
  // True when every one of `from` has sent a value, its newest accepted one came from a locally
  // converged sender, and that sender had absorbed at least iteration `need_seen[f]` of ours
  // (when listed): those inputs are final for our current values and will not change unless
  // ours do.
  bool AllConverged(const std::vector<uint32_t>& from,
                    const std::map<uint32_t, uint64_t>& need_seen = {}) const;
  // True when, for every neighbour f listed with need_seen[f] > 0, f's newest accepted value
  // came from a locally converged sender that had absorbed at least iteration need_seen[f] of
  // ours: our newest value is no longer in flight to f, and did not unsettle it. Neighbours not
  // listed (or listed with 0) are not asked about.
  bool AbsorbedByConverged(const std::map<uint32_t, uint64_t>& need_seen) const;
  // The newest iteration of `from`'s values handed to the task (0: none yet of its current
  // incarnation), and that incarnation.
  uint64_t Taken(uint32_t from) const;
  uint64_t IncarnationOf(uint32_t from) const;
  // The incarnation of the task this mailbox belongs to (1 unless restored on a new daemon).
  void set_own_incarnation(uint64_t incarnation) { own_incarnation_ = incarnation; }
  // Wakes every waiter for good (the task is halting).
  void Close();

  // Counters for tests and logs.
  uint64_t dropped() const;
  // Threads blocked in TakeIteration, WaitForNew or WaitForChange now (a test waits for its reader
  // to block).
  size_t waiters() const;

 private:
  struct Slot {
    uint64_t incarnation = 0;  // of the newest value accepted; the fields below count within it
    uint64_t newest = 0;       // highest iteration accepted
    uint64_t taken = 0;        // highest iteration handed to the task
    bool converged = false;    // the newest value's sender was locally converged
    bool unconverged_since_taken = false;  // a value accepted since the last take was not
    uint64_t seen = 0;        // the newest value's sender had absorbed our values up to this
    std::string bytes;        // async: the newest value
    std::string taken_bytes;  // async: the value last handed to the task
    std::map<uint64_t, std::string> by_iteration;  // sync: not yet taken
  };
  bool HasNewLocked() const;
  // A sender's convergence and what it absorbed of ours, from its newest value; a change counts.
  void NoteLocked(Slot& slot, bool sender_converged, uint64_t seen);
  bool SeenLocked(const std::map<uint32_t, uint64_t>& need_seen) const;

  const bool sync_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<uint32_t, Slot> slots_;
  bool closed_ = false;
  uint64_t changes_ = 0;
  size_t waiters_ = 0;
  uint64_t own_incarnation_ = 1;
  uint64_t dropped_ = 0;
};

}  // namespace aiac::runtime
