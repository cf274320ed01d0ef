#include "redistribution/ring_moves.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "redistribution/ring.h"

namespace aiac::redistribution {
namespace {

Status Check(const RingMovesInput& in) {
  const size_t n = in.items.size();
  if (n < 2) return InvalidArgument("a ring needs at least 2 tasks");
  if (in.surplus.size() != n || in.c_next.size() != n || in.c_prev.size() != n) {
    return InvalidArgument("items, surplus, c_next and c_prev must have one entry per task (" +
                           std::to_string(n) + ")");
  }
  for (size_t t = 0; t < n; ++t) {
    if (in.items[t] < 1 || in.items[t] - in.surplus[t] < 1) {
      return InvalidArgument("task " + std::to_string(t) + " would hold no item (" +
                             std::to_string(in.items[t]) + " held, surplus " +
                             std::to_string(in.surplus[t]) + ")");
    }
    if (!(in.c_next[t] > 0) || !(in.c_prev[t] > 0) || !std::isfinite(in.c_next[t]) ||
        !std::isfinite(in.c_prev[t])) {
      return InvalidArgument("task " + std::to_string(t) +
                             ": a link's seconds per item must be positive and finite");
    }
  }
  if (std::accumulate(in.surplus.begin(), in.surplus.end(), int64_t{0}) != 0) {
    return InvalidArgument("the surpluses do not sum to 0");
  }
  return Status::Ok();
}

// Takes out a pure circulation: when every link carries items the same way round, the least of
// them goes round the whole ring and back, changing no load.
void TakeOutCirculation(std::vector<int64_t>& f) {
  if (std::all_of(f.begin(), f.end(), [](int64_t x) { return x > 0; })) {
    const int64_t least = *std::min_element(f.begin(), f.end());
    for (int64_t& x : f) x -= least;
  } else if (std::all_of(f.begin(), f.end(), [](int64_t x) { return x < 0; })) {
    const int64_t least = *std::max_element(f.begin(), f.end());
    for (int64_t& x : f) x -= least;
  }
}

}  // namespace

const char* RingPlannerName(RingPlanner planner) {
  return planner == RingPlanner::kOptimal ? "ring" : "nearest";
}

std::vector<int64_t> NearestFlows(const std::vector<int64_t>& delta) {
  if (delta.empty()) return {};
  // f_i = x + p_i with p_i = delta_1 + ... + delta_i (ring.h NetFlows); sum |f_i| is least at
  // x = -median(p).
  std::vector<int64_t> p = NetFlows(delta, 0);
  std::vector<int64_t> sorted = p;
  std::nth_element(sorted.begin(),
                   sorted.begin() + static_cast<std::ptrdiff_t>((sorted.size() - 1) / 2),
                   sorted.end());
  const int64_t x = -sorted[(sorted.size() - 1) / 2];
  return NetFlows(delta, x);
}

std::vector<int64_t> FlowsOfTransfers(size_t n, const std::vector<Transfer>& transfers) {
  std::vector<int64_t> f(n, 0);
  for (const Transfer& t : transfers) {
    const auto from = static_cast<size_t>(t.from), to = static_cast<size_t>(t.to);
    if (to == (from + 1) % n) {
      f[from] += t.items;  // over link `from` -> `from` + 1
    } else {
      f[to] -= t.items;  // over link `to` -> `to` + 1, backwards
    }
  }
  TakeOutCirculation(f);
  return f;
}

std::vector<RingMove> RingWaves(const std::vector<int64_t>& items,
                                const std::vector<int64_t>& flows) {
  const size_t n = flows.size();
  std::vector<RingMove> pending;
  for (size_t i = 0; i < n; ++i) {
    if (flows[i] == 0) continue;
    const size_t next = (i + 1) % n;
    RingMove m = flows[i] > 0 ? RingMove{i, next, flows[i], 0} : RingMove{next, i, -flows[i], 0};
    // On a ring of two, both links join the same tasks: one move per direction.
    auto same = std::find_if(pending.begin(), pending.end(),
                             [&](const RingMove& p) { return p.from == m.from && p.to == m.to; });
    if (same != pending.end()) {
      same->items += m.items;
    } else {
      pending.push_back(m);
    }
  }
  std::vector<RingMove> out;
  std::vector<int64_t> held = items;
  for (int wave = 0; !pending.empty(); ++wave) {
    std::vector<int64_t> left = held;  // what each task can still give in this wave
    std::vector<RingMove> later;
    const size_t before = out.size();
    for (RingMove m : pending) {
      if (left[m.from] - m.items >= 1) {
        left[m.from] -= m.items;
        m.wave = wave;
        out.push_back(m);
      } else {
        later.push_back(m);
      }
    }
    if (out.size() == before) {
      // Flows outside the contract (a circulation through tasks too small to pass it on): the
      // rest in one last wave, each source giving what it can when its turn comes.
      for (RingMove m : later) {
        m.wave = wave;
        out.push_back(m);
      }
      break;
    }
    for (size_t k = before; k < out.size(); ++k) {
      held[out[k].from] -= out[k].items;
      held[out[k].to] += out[k].items;
    }
    pending = std::move(later);
  }
  return out;
}

Result<RingMoves> PlanRingMoves(const RingMovesInput& in, RingPlanner planner) {
  if (Status s = Check(in); !s.ok()) return s;
  const size_t n = in.items.size();
  RingMoves out;
  out.flows.assign(n, 0);
  out.ring_case = planner == RingPlanner::kOptimal ? "none" : "nearest";
  if (std::all_of(in.surplus.begin(), in.surplus.end(), [](int64_t s) { return s == 0; }))
    return out;
  RingInput ring{true, in.items, in.surplus, in.c_next, in.c_prev};
  if (Status s = CheckRingInput(ring); !s.ok()) return s;
  AIAC_ASSIGN_OR_RETURN(auto plan, PlanRing(ring));
  out.lower_bound = plan.lower_bound;
  if (planner == RingPlanner::kOptimal) {
    out.ring_case = plan.ring_case;
    out.flows = FlowsOfTransfers(n, plan.transfers);
  } else {
    out.flows = NearestFlows(in.surplus);
  }
  // The plan's time as the one-port simulator replays its net flows, the better send order.
  out.planned_time = -1;
  for (bool next_first : {true, false}) {
    const RingSchedule s =
        SimulateRing(in.items, in.c_next, in.c_prev, true, OpsForFlows(out.flows, next_first));
    if (s.complete && (out.planned_time < 0 || s.makespan < out.planned_time))
      out.planned_time = s.makespan;
  }
  if (out.planned_time < 0) return Internal("the ring's flows could not be replayed");
  out.moves = RingWaves(in.items, out.flows);
  return out;
}

}  // namespace aiac::redistribution
