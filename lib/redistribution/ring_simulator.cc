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

}  // namespace

RingSchedule SimulateRingEvents(const std::vector<int64_t>& loads,
                                const std::vector<double>& c_next,
                                const std::vector<double>& c_prev, bool bidirectional,
                                const std::vector<std::vector<RingOp>>& ops, bool batch) {
  const int n = static_cast<int>(loads.size());
  std::vector<int64_t> holding = loads;
  std::vector<size_t> op(n, 0);
  std::vector<int64_t> left(n, 0);
  std::vector<double> send_free(n, 0), recv_free(n, 0);
  std::vector<std::deque<Arrivals>> incoming(n);  // not yet arrived, in time order
  for (int i = 0; i < n; ++i) left[i] = ops[i].empty() ? 0 : ops[i][0].items;
  auto skip_empty = [&](int i) {
    while (op[i] < ops[i].size() && left[i] == 0) {
      if (++op[i] < ops[i].size()) left[i] = ops[i][op[i]].items;
    }
  };
  // Arrivals up to `t` become held items.
  auto realize = [&](int i, double t) {
    auto& q = incoming[i];
    if (!std::isfinite(t)) {
      for (const Arrivals& a : q) holding[i] += a.count;
      q.clear();
      return;
    }
    while (!q.empty() && q.front().first <= t) {
      Arrivals& a = q.front();
      const int64_t k = std::min<int64_t>(
          a.count, static_cast<int64_t>(std::floor((t - a.first) / a.step + 1e-9)) + 1);
      holding[i] += k;
      a.count -= k;
      a.first += static_cast<double>(k) * a.step;
      if (a.count == 0)
        q.pop_front();
      else
        break;
    }
  };
  // At `time`, processor `who` is worth another look.
  struct Event {
    double time;
    int who;
    bool operator>(const Event& o) const { return time > o.time; }
  };
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  for (int i = 0; i < n; ++i) {
    skip_empty(i);
    if (op[i] < ops[i].size()) events.push({ops[i][op[i]].release, i});
  }
  std::vector<bool> starving(n, false);
  RunLog log(n);
  double makespan = 0;
  std::vector<int> check;
  std::vector<uint64_t> stamp(n, 0);
  uint64_t round = 0;
  auto mark = [&](int i) {
    if (stamp[i] != round) {
      stamp[i] = round;
      check.push_back(i);
    }
  };
  while (!events.empty()) {
    const double now = events.top().time;
    ++round;
    check.clear();
    while (!events.empty() && events.top().time <= now) {
      mark(events.top().who);
      events.pop();
    }
    std::sort(check.begin(), check.end());
    // Start what can start now: successor-bound sends first, then predecessor-bound.
    for (bool started = true; started;) {
      started = false;
      for (int pass = 0; pass < 2; ++pass) {
        for (size_t ci = 0; ci < check.size(); ++ci) {
          const int i = check[ci];
          if (op[i] >= ops[i].size()) continue;
          const RingOp& o = ops[i][op[i]];
          if (o.to_next != (pass == 0)) continue;
          if (send_free[i] > now || o.release > now) continue;
          realize(i, now);
          if (holding[i] < 1) {
            // Wait for the next item on its way here (or for one to be sent).
            if (!incoming[i].empty())
              events.push({incoming[i].front().first, i});
            else
              starving[i] = true;
            continue;
          }
          const int to = o.to_next ? (i + 1) % n : (i + n - 1) % n;
          if (bidirectional && recv_free[to] > now) {
            events.push({recv_free[to], i});  // look again when the port frees
            continue;
          }
          const double cost = o.to_next ? c_next[i] : c_prev[i];
          // Bidirectional: a successor-bound sender wins its receiver's port at every item
          // boundary (that direction goes first), so the items it holds go out as one run; a
          // predecessor-bound one may lose the port between items: one item at a time.
          // Unidirectional: nobody else sends to `to`, so the run goes on while each next item
          // is held when it would start: those held now, then those already on their way here
          // (arrivals not scheduled yet end the run; its end wakes this processor again).
          int64_t k = 1;
          if (batch && bidirectional && o.to_next) k = std::min(holding[i], left[i]);
          if (batch && !bidirectional) {
            k = std::min(holding[i], left[i]);
            if (k < left[i] && !incoming[i].empty()) {
              int64_t arrived = 0;  // of the known arrivals, by the start of item k
              size_t stream = 0;
              int64_t used_in_stream = 0;
              while (k < left[i] && stream < incoming[i].size()) {
                const double start_k = now + static_cast<double>(k) * cost;
                const Arrivals& a = incoming[i][stream];
                const double next_arrival = a.first + static_cast<double>(used_in_stream) * a.step;
                if (next_arrival > start_k) {
                  if (holding[i] + arrived - k >= 1) {
                    ++k;  // held already
                    continue;
                  }
                  break;  // item k would have to wait
                }
                ++arrived;
                if (++used_in_stream == a.count) {
                  ++stream;
                  used_in_stream = 0;
                }
              }
              while (k < left[i] && holding[i] + arrived - k >= 1) ++k;  // no more known arrivals
            }
          }
          const double end = now + static_cast<double>(k) * cost;
          // The run's items are counted out of `holding` now; arrivals it relied on are added
          // when realized, so the balance is right by the end of the run.
          holding[i] -= k;
          log.Add(i, to, k, now, end);
          makespan = std::max(makespan, end);
          send_free[i] = end;
          recv_free[to] = end;
          incoming[to].push_back({now + cost, cost, k});
          events.push({end, i});
          if (starving[to]) {  // it waits for an item: wake it when the first one arrives
            starving[to] = false;
            events.push({now + cost, to});
          }
          left[i] -= k;
          skip_empty(i);
          if (op[i] < ops[i].size() && ops[i][op[i]].release > now)
            events.push({ops[i][op[i]].release, i});
          started = true;
        }
      }
    }
  }
  RingSchedule out;
  out.complete = true;
  for (int i = 0; i < n; ++i) {
    if (op[i] < ops[i].size()) out.complete = false;
    realize(i, std::numeric_limits<double>::infinity());
  }
  out.final_loads = holding;
  out.makespan = makespan;
  out.transfers = log.Finish();
  return out;
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
