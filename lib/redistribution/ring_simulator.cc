#include "redistribution/ring_simulator.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <queue>

namespace aiac::redistribution {

namespace {

// Runs of items over one link, merged as they are produced (no per-item storage).
class RunLog {
 public:
  explicit RunLog(int n) : open_(n) {}
  void Add(int from, int to, int64_t items, double start, double end) {
    Transfer& r = open_[from];
    if (r.items > 0 && r.to == to && r.end == start) {
      r.items += items;
      r.end = end;
      return;
    }
    if (r.items > 0) done_.push_back(r);
    r = {from, to, items, start, end};
  }
  std::vector<Transfer> Finish() {
    for (const Transfer& r : open_) {
      if (r.items > 0) done_.push_back(r);
    }
    std::sort(done_.begin(), done_.end(), [](const Transfer& a, const Transfer& b) {
      if (a.start != b.start) return a.start < b.start;
      return a.from < b.from;
    });
    return std::move(done_);
  }

 private:
  std::vector<Transfer> open_;
  std::vector<Transfer> done_;
};

// Items on their way to one processor: `count` arrivals at first, first + step, ...
struct Arrivals {
  double first, step;
  int64_t count;
};

// The event-driven one-port replay of SimulateRingEvents: each processor works through its list
// of operations; at each event time the processors worth a look start what they can,
// successor-bound sends first.
class EventSimulator {
 public:
  EventSimulator(const std::vector<int64_t>& loads, const std::vector<double>& c_next,
                 const std::vector<double>& c_prev, bool bidirectional,
                 const std::vector<std::vector<RingOp>>& ops, bool batch)
      : n_(static_cast<int>(loads.size())),
        c_next_(c_next),
        c_prev_(c_prev),
        bidirectional_(bidirectional),
        ops_(ops),
        batch_(batch),
        holding_(loads),
        op_(n_, 0),
        left_(n_, 0),
        send_free_(n_, 0),
        recv_free_(n_, 0),
        incoming_(n_),
        starving_(n_, false),
        stamp_(n_, 0),
        log_(n_) {}

  RingSchedule Run() {
    for (int i = 0; i < n_; ++i) {
      left_[i] = ops_[i].empty() ? 0 : ops_[i][0].items;
      SkipEmpty(i);
      if (op_[i] < ops_[i].size()) events_.push({ops_[i][op_[i]].release, i});
    }
    while (!events_.empty()) {
      const double now = events_.top().time;
      ++round_;
      check_.clear();
      while (!events_.empty() && events_.top().time <= now) {
        Mark(events_.top().who);
        events_.pop();
      }
      std::sort(check_.begin(), check_.end());
      // Start what can start now: successor-bound sends first, then predecessor-bound.
      for (bool started = true; started;) {
        started = false;
        for (int pass = 0; pass < 2; ++pass) {
          for (const int i : check_) started = TryStart(i, pass == 0, now) || started;
        }
      }
    }
    RingSchedule out;
    out.complete = true;
    for (int i = 0; i < n_; ++i) {
      if (op_[i] < ops_[i].size()) out.complete = false;
      Realize(i, std::numeric_limits<double>::infinity());
    }
    out.final_loads = holding_;
    out.makespan = makespan_;
    out.transfers = log_.Finish();
    return out;
  }

 private:
  // At `time`, processor `who` is worth another look.
  struct Event {
    double time;
    int who;
    bool operator>(const Event& o) const { return time > o.time; }
  };

  void SkipEmpty(int i) {
    while (op_[i] < ops_[i].size() && left_[i] == 0) {
      if (++op_[i] < ops_[i].size()) left_[i] = ops_[i][op_[i]].items;
    }
  }

  // Arrivals up to `t` become held items.
  void Realize(int i, double t) {
    auto& q = incoming_[i];
    if (!std::isfinite(t)) {
      for (const Arrivals& a : q) holding_[i] += a.count;
      q.clear();
      return;
    }
    while (!q.empty() && q.front().first <= t) {
      Arrivals& a = q.front();
      const int64_t k = std::min<int64_t>(
          a.count, static_cast<int64_t>(std::floor((t - a.first) / a.step + 1e-9)) + 1);
      holding_[i] += k;
      a.count -= k;
      a.first += static_cast<double>(k) * a.step;
      if (a.count != 0) break;
      q.pop_front();
    }
  }

  void Mark(int i) {
    if (stamp_[i] == round_) return;
    stamp_[i] = round_;
    check_.push_back(i);
  }

  // Processor i's next operation, when it goes `to_next` (this pass's direction): started now
  // when it can, else a later look at i is scheduled. True when it started.
  bool TryStart(int i, bool to_next, double now) {
    if (op_[i] >= ops_[i].size()) return false;
    const RingOp& o = ops_[i][op_[i]];
    if (o.to_next != to_next) return false;
    if (send_free_[i] > now || o.release > now) return false;
    Realize(i, now);
    if (holding_[i] < 1) {
      // Wait for the next item on its way here (or for one to be sent).
      if (!incoming_[i].empty()) {
        events_.push({incoming_[i].front().first, i});
      } else {
        starving_[i] = true;
      }
      return false;
    }
    const int to = o.to_next ? (i + 1) % n_ : (i + n_ - 1) % n_;
    if (bidirectional_ && recv_free_[to] > now) {
      events_.push({recv_free_[to], i});  // look again when the port frees
      return false;
    }
    const double cost = o.to_next ? c_next_[i] : c_prev_[i];
    Send(i, to, RunLength(i, o.to_next, now, cost), now, cost);
    return true;
  }

  // How many items i sends in one run. Bidirectional: a successor-bound sender wins its
  // receiver's port at every item boundary (that direction goes first), so the items it holds go
  // out as one run; a predecessor-bound one may lose the port between items: one item at a time.
  // Unidirectional: nobody else sends to `to`, so the run goes on while each next item is held
  // when it would start: those held now, then those already on their way here (arrivals not
  // scheduled yet end the run; its end wakes this processor again).
  int64_t RunLength(int i, bool to_next, double now, double cost) const {
    if (!batch_ || (bidirectional_ && !to_next)) return 1;
    int64_t k = std::min(holding_[i], left_[i]);
    if (bidirectional_ || k >= left_[i] || incoming_[i].empty()) return k;
    int64_t arrived = 0;  // of the known arrivals, by the start of item k
    size_t stream = 0;
    int64_t used_in_stream = 0;
    while (k < left_[i] && stream < incoming_[i].size()) {
      const double start_k = now + static_cast<double>(k) * cost;
      const Arrivals& a = incoming_[i][stream];
      const double next_arrival = a.first + static_cast<double>(used_in_stream) * a.step;
      if (next_arrival > start_k) {
        if (holding_[i] + arrived - k < 1) break;  // item k would have to wait
        ++k;                                       // held already
        continue;
      }
      ++arrived;
      if (++used_in_stream == a.count) {
        ++stream;
        used_in_stream = 0;
      }
    }
    while (k < left_[i] && holding_[i] + arrived - k >= 1) ++k;  // no more known arrivals
    return k;
  }

  // i sends k items to `to` from `now`, one every `cost`.
  void Send(int i, int to, int64_t k, double now, double cost) {
    const double end = now + static_cast<double>(k) * cost;
    // The run's items are counted out of `holding` now; arrivals it relied on are added when
    // realized, so the balance is right by the end of the run.
    holding_[i] -= k;
    log_.Add(i, to, k, now, end);
    makespan_ = std::max(makespan_, end);
    send_free_[i] = end;
    recv_free_[to] = end;
    incoming_[to].push_back({now + cost, cost, k});
    events_.push({end, i});
    if (starving_[to]) {  // it waits for an item: wake it when the first one arrives
      starving_[to] = false;
      events_.push({now + cost, to});
    }
    left_[i] -= k;
    SkipEmpty(i);
    if (op_[i] < ops_[i].size() && ops_[i][op_[i]].release > now) {
      events_.push({ops_[i][op_[i]].release, i});
    }
  }

  const int n_;
  const std::vector<double>& c_next_;
  const std::vector<double>& c_prev_;
  const bool bidirectional_;
  const std::vector<std::vector<RingOp>>& ops_;
  const bool batch_;
  std::vector<int64_t> holding_;
  std::vector<size_t> op_;
  std::vector<int64_t> left_;
  std::vector<double> send_free_, recv_free_;
  std::vector<std::deque<Arrivals>> incoming_;  // not yet arrived, in time order
  std::vector<bool> starving_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::vector<int> check_;  // the processors to look at in this round, once each
  std::vector<uint64_t> stamp_;
  uint64_t round_ = 0;
  RunLog log_;
  double makespan_ = 0;
};

}  // namespace

RingSchedule SimulateRingEvents(const std::vector<int64_t>& loads,
                                const std::vector<double>& c_next,
                                const std::vector<double>& c_prev, bool bidirectional,
                                const std::vector<std::vector<RingOp>>& ops, bool batch) {
  return EventSimulator(loads, c_next, c_prev, bidirectional, ops, batch).Run();
}

namespace {

// The unidirectional replay when some processor receives nothing: then every processor's items
// depend only on its predecessor's, so walking the ring once from that processor computes the
// same ASAP schedule as the event simulation, item by item, with no event queue.
bool SimulateUnidirectionalChain(const std::vector<int64_t>& loads,
                                 const std::vector<double>& c_next,
                                 const std::vector<std::vector<RingOp>>& ops, RingSchedule& out) {
  const int n = static_cast<int>(loads.size());
  std::vector<int64_t> sent(n, 0);
  for (int i = 0; i < n; ++i) {
    for (const RingOp& o : ops[i]) {
      if (!o.to_next && o.items > 0) return false;  // not a unidirectional plan
      sent[i] += o.items;
    }
  }
  int first = -1;
  for (int i = 0; i < n && first < 0; ++i) {
    if (sent[(i + n - 1) % n] == 0) first = i;
  }
  if (first < 0) return false;
  RunLog log(n);
  std::vector<int64_t> final_loads = loads;
  std::vector<double> arrivals, next_arrivals;  // item arrival times at the current processor
  double makespan = 0;
  for (int step = 0; step < n; ++step) {
    const int i = (first + step) % n;
    int64_t held = loads[i];
    size_t arrived = 0;  // arrivals already counted in `held`
    double free_at = 0;
    next_arrivals.clear();
    for (const RingOp& o : ops[i]) {
      for (int64_t k = 0; k < o.items; ++k) {
        double start = std::max(free_at, o.release);
        while (arrived < arrivals.size() && arrivals[arrived] <= start) {
          ++held;
          ++arrived;
        }
        if (held < 1) {
          if (arrived == arrivals.size()) return false;  // never held: the event replay reports it
          start = arrivals[arrived++];
          ++held;
        }
        const double end = start + c_next[i];
        --held;
        log.Add(i, (i + 1) % n, 1, start, end);
        next_arrivals.push_back(end);
        free_at = end;
        makespan = std::max(makespan, end);
      }
    }
    final_loads[i] = held + static_cast<int64_t>(arrivals.size() - arrived);
    std::swap(arrivals, next_arrivals);
  }
  // What the last processor sent reached `first`.
  final_loads[first] += static_cast<int64_t>(arrivals.size());
  out.complete = true;
  out.makespan = makespan;
  out.final_loads = std::move(final_loads);
  out.transfers = log.Finish();
  return true;
}

}  // namespace

RingSchedule SimulateRing(const std::vector<int64_t>& loads, const std::vector<double>& c_next,
                          const std::vector<double>& c_prev, bool bidirectional,
                          const std::vector<std::vector<RingOp>>& ops) {
  RingSchedule out;
  if (!bidirectional && SimulateUnidirectionalChain(loads, c_next, ops, out)) return out;
  return SimulateRingEvents(loads, c_next, c_prev, bidirectional, ops, true);
}

}  // namespace aiac::redistribution
