#include "redistribution/ring_simulator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>

namespace aiac::redistribution {

RingSchedule SimulateRing(const std::vector<int64_t>& loads, const std::vector<double>& c_next,
                          const std::vector<double>& c_prev, bool bidirectional,
                          const std::vector<std::vector<RingOp>>& ops) {
  const int n = static_cast<int>(loads.size());
  std::vector<int64_t> holding = loads;
  std::vector<size_t> op(n, 0);
  std::vector<int64_t> left(n, 0);
  std::vector<double> send_free(n, 0), recv_free(n, 0);
  for (int i = 0; i < n; ++i) left[i] = ops[i].empty() ? 0 : ops[i][0].items;
  auto skip_empty = [&](int i) {
    while (op[i] < ops[i].size() && left[i] == 0) {
      if (++op[i] < ops[i].size()) left[i] = ops[i][op[i]].items;
    }
  };
  // One kind of event: at `time`, processor `who` is worth another look; `to` >= 0 also means
  // an item reached `to` then (and its sender and the receiver's port are free again).
  struct Event {
    double time;
    int who, to;
    bool operator>(const Event& o) const { return time > o.time; }
  };
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  for (int i = 0; i < n; ++i) {
    skip_empty(i);
    if (op[i] < ops[i].size()) events.push({ops[i][op[i]].release, i, -1});
  }
  struct Item {
    int from, to;
    double start, end;
  };
  std::vector<Item> items;
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
      const Event e = events.top();
      events.pop();
      mark(e.who);
      if (e.to >= 0) {
        ++holding[e.to];
        mark(e.to);
        if (bidirectional) {  // the receiver's port is free: both its neighbours may send now
          mark((e.to + 1) % n);
          mark((e.to + n - 1) % n);
        }
      }
    }
    std::sort(check.begin(), check.end());
    // Start every item that can start now: successor-bound sends first, then predecessor-bound.
    for (bool started = true; started;) {
      started = false;
      for (int pass = 0; pass < 2; ++pass) {
        for (int i : check) {
          if (op[i] >= ops[i].size()) continue;
          const RingOp& o = ops[i][op[i]];
          if (o.to_next != (pass == 0)) continue;
          if (send_free[i] > now || o.release > now || holding[i] < 1) continue;
          const int to = o.to_next ? (i + 1) % n : (i + n - 1) % n;
          if (bidirectional && recv_free[to] > now) continue;
          const double end = now + (o.to_next ? c_next[i] : c_prev[i]);
          --holding[i];
          items.push_back({i, to, now, end});
          send_free[i] = end;
          recv_free[to] = end;
          events.push({end, i, to});
          --left[i];
          skip_empty(i);
          if (op[i] < ops[i].size() && ops[i][op[i]].release > now) events.push({ops[i][op[i]].release, i, -1});
          started = true;
        }
      }
    }
  }
  RingSchedule out;
  out.complete = true;
  for (int i = 0; i < n; ++i) {
    if (op[i] < ops[i].size()) out.complete = false;
  }
  out.final_loads = holding;
  // Merge items into runs without pause over one link.
  std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    if (a.from != b.from) return a.from < b.from;
    return a.start < b.start;
  });
  for (const Item& it : items) {
    out.makespan = std::max(out.makespan, it.end);
    if (!out.transfers.empty()) {
      Transfer& last = out.transfers.back();
      if (last.from == it.from && last.to == it.to && last.end == it.start) {
        ++last.items;
        last.end = it.end;
        continue;
      }
    }
    out.transfers.push_back({it.from, it.to, 1, it.start, it.end});
  }
  std::stable_sort(out.transfers.begin(), out.transfers.end(), [](const Transfer& a, const Transfer& b) {
    if (a.start != b.start) return a.start < b.start;
    return a.from < b.from;
  });
  return out;
}

}  // namespace aiac::redistribution
