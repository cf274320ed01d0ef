#include "daemon/value_log.h"

#include <algorithm>

namespace aiac::daemon {

void ValueLog::DropFront() {
  bytes_ -= values_.front().bytes.size();
  values_.pop_front();
}

void ValueLog::Sent(LinkValue v) {
  if (!enabled()) return;
  bytes_ += v.bytes.size();
  values_.push_back(std::move(v));
  while (bytes_ > limit_ && values_.size() > 1) {
    dropped_through_ = std::max(dropped_through_, values_.front().iteration);
    DropFront();
  }
}

void ValueLog::Trim(uint64_t before) {
  while (!values_.empty() && values_.front().iteration < before) DropFront();
}

void ValueLog::Replay(std::deque<LinkValue>& pending) {
  // A value still pending was never sent, so it is newer than every logged one.
  pending.insert(pending.begin(), std::make_move_iterator(values_.begin()),
                 std::make_move_iterator(values_.end()));
  values_.clear();
  bytes_ = 0;
}

}  // namespace aiac::daemon
