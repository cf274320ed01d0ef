#include "runtime/mailbox.h"

namespace aiac::runtime {

bool Mailbox::Put(uint32_t from, uint64_t iteration, std::string bytes, bool sender_converged,
                  uint64_t seen, uint64_t incarnation, uint64_t seen_incarnation) {
  std::lock_guard lock(mu_);
  Slot& slot = slots_[from];
  if (incarnation < slot.incarnation) {
    ++dropped_;
    return false;  // from a daemon that was replaced: fenced off
  }
  if (incarnation > slot.incarnation && sync_) {
    // A new owner of the task, restored from a checkpoint: it sends again what it sent after its
    // checkpoint's last two iterations, then computes the iterations after (task_state.h). A
    // synchronous iteration's value is the same whoever computed it, so what the old owner sent
    // and was not taken yet still holds.
    slot.incarnation = incarnation;
    slot.newest = slot.taken;
  } else if (incarnation > slot.incarnation) {
    // A new owner of the task: count again within its incarnation. Whatever of the old one was
    // not taken yet is stale.
    slot = Slot{};
    slot.incarnation = incarnation;
  }
  if (!sync_ && iteration == slot.newest && iteration > 0) {
    // The newest value sent again by an idle sender (TaskRunner::Acknowledge): only what it has
    // absorbed of ours since, and its convergence, are news.
    NoteLocked(slot, sender_converged, seen_incarnation == own_incarnation_ ? seen : 0);
    ++dropped_;  // (its bytes: the task has them)
    return false;
  }
  if (iteration <= slot.newest || iteration <= slot.taken) {
    ++dropped_;
    return false;  // stale or duplicate: a newer value was already accepted
  }
  if (!sync_ && slot.taken > 0 && bytes == slot.taken_bytes) {
    // A newer iteration whose value the task has already (a sender that iterated for other
    // inputs of its own): news only like an acknowledgement, and no reason to wake the task.
    // Were it handed over, a task that iterates on every new input would compute the same
    // values again and send them back as new, and two such neighbours would do so forever.
    slot.newest = slot.taken = iteration;
    slot.bytes.clear();  // a value sent between them is superseded by this one
    slot.unconverged_since_taken = false;
    NoteLocked(slot, sender_converged, seen_incarnation == own_incarnation_ ? seen : 0);
    ++dropped_;
    return false;
  }
  slot.newest = iteration;
  slot.converged = sender_converged;
  slot.unconverged_since_taken |= !sender_converged;
  slot.seen = seen_incarnation == own_incarnation_ ? seen : 0;
  if (sync_) {
    slot.by_iteration[iteration] = std::move(bytes);
  } else {
    slot.bytes = std::move(bytes);
  }
  ++changes_;
  cv_.notify_all();
  return true;
}

void Mailbox::NoteLocked(Slot& slot, bool sender_converged, uint64_t seen) {
  if (slot.converged == sender_converged && slot.seen == seen) return;
  slot.converged = sender_converged;
  slot.seen = seen;
  ++changes_;
  cv_.notify_all();
}

bool Mailbox::HasNewLocked() const {
  for (const auto& [from, slot] : slots_) {
    if (slot.newest > slot.taken) return true;
  }
  return false;
}

std::vector<Mailbox::Value> Mailbox::TakeNew() {
  std::lock_guard lock(mu_);
  std::vector<Value> out;
  for (auto& [from, slot] : slots_) {
    if (slot.newest <= slot.taken) continue;
    slot.taken = slot.newest;
    slot.unconverged_since_taken = false;
    if (sync_) {
      auto it = slot.by_iteration.find(slot.newest);
      out.push_back({from, slot.newest, std::move(it->second)});
      slot.by_iteration.clear();
    } else {
      slot.taken_bytes = slot.bytes;
      out.push_back({from, slot.newest, std::move(slot.bytes)});
      slot.bytes.clear();
    }
  }
  return out;
}

std::optional<std::vector<Mailbox::Value>> Mailbox::TakeIteration(
    const std::vector<uint32_t>& from, uint64_t iteration, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  auto ready = [&] {
    if (closed_) return true;
    for (uint32_t f : from) {
      auto it = slots_.find(f);
      if (it == slots_.end() || !it->second.by_iteration.count(iteration)) return false;
    }
    return true;
  };
  ++waiters_;
  const bool got = cv_.wait_for(lock, timeout, ready);
  --waiters_;
  if (!got || closed_) return std::nullopt;
  std::vector<Value> out;
  for (uint32_t f : from) {
    Slot& slot = slots_[f];
    auto it = slot.by_iteration.find(iteration);
    out.push_back({f, iteration, std::move(it->second)});
    slot.by_iteration.erase(slot.by_iteration.begin(), std::next(it));
    slot.taken = std::max(slot.taken, iteration);
  }
  return out;
}

bool Mailbox::WaitForNew(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  ++waiters_;
  const bool got = cv_.wait_for(lock, timeout, [&] { return closed_ || HasNewLocked(); });
  --waiters_;
  return got && !closed_;
}

uint64_t Mailbox::changes() const {
  std::lock_guard lock(mu_);
  return changes_;
}

bool Mailbox::WaitForChange(uint64_t since, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  ++waiters_;
  const bool got = cv_.wait_for(lock, timeout, [&] { return closed_ || changes_ != since; });
  --waiters_;
  return got && !closed_;
}

void Mailbox::Wake() {
  std::lock_guard lock(mu_);
  ++changes_;
  cv_.notify_all();
}

bool Mailbox::HasNewFromUnconverged() const {
  std::lock_guard lock(mu_);
  for (const auto& [from, slot] : slots_) {
    if (slot.newest > slot.taken && slot.unconverged_since_taken) return true;
  }
  return false;
}

size_t Mailbox::waiters() const {
  std::lock_guard lock(mu_);
  return waiters_;
}

bool Mailbox::SeenLocked(const std::map<uint32_t, uint64_t>& need_seen) const {
  for (const auto& [f, need] : need_seen) {
    if (need == 0) continue;
    auto it = slots_.find(f);
    if (it == slots_.end() || it->second.seen < need) return false;
  }
  return true;
}

bool Mailbox::AllConverged(const std::vector<uint32_t>& from,
                           const std::map<uint32_t, uint64_t>& need_seen) const {
  std::lock_guard lock(mu_);
  for (uint32_t f : from) {
    auto it = slots_.find(f);
    if (it == slots_.end() || !it->second.converged) return false;
  }
  return SeenLocked(need_seen);
}

bool Mailbox::AbsorbedByConverged(const std::map<uint32_t, uint64_t>& need_seen) const {
  std::lock_guard lock(mu_);
  for (const auto& [f, need] : need_seen) {
    if (need == 0) continue;
    auto it = slots_.find(f);
    if (it == slots_.end() || !it->second.converged || it->second.seen < need) return false;
  }
  return true;
}

uint64_t Mailbox::IncarnationOf(uint32_t from) const {
  std::lock_guard lock(mu_);
  auto it = slots_.find(from);
  return it == slots_.end() ? 0 : it->second.incarnation;
}

uint64_t Mailbox::Taken(uint32_t from) const {
  std::lock_guard lock(mu_);
  auto it = slots_.find(from);
  return it == slots_.end() ? 0 : it->second.taken;
}

void Mailbox::Close() {
  std::lock_guard lock(mu_);
  closed_ = true;
  cv_.notify_all();
}

uint64_t Mailbox::dropped() const {
  std::lock_guard lock(mu_);
  return dropped_;
}

}  // namespace aiac::runtime
