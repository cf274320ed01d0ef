// Moving independent items between running tasks laid out on a ring (`--migration ring`
// experiment; ring-redistribution.md): task i's neighbours are i - 1 and i + 1 (mod n), items
// move only between neighbours, and a link's per-item time is what the measured (or emulated)
// link between the two tasks' daemons costs. Two planners:
//
//   kOptimal  the paper's bidirectional plan (ring.h: Algorithm 3 on a homogeneous ring, System 2
//             on a heterogeneous one), optimal for the one-port model;
//   kNearest  the naive nearest-neighbour shuffle: every item goes the fewest hops to a task that
//             lacks items (the circulation that least moves items, System 2's conservation with
//             x the median), whatever the links cost.
//
// Either way the plan becomes one move per link that carries items (its net flow), grouped in
// waves a task's moves can run in: a task gives in a wave only what it holds at the wave's start
// (keeping at least one item); what it passes on goes in a later wave, once it has come.
//
// Pure: a function of its inputs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "redistribution/ring_simulator.h"

namespace aiac::redistribution {

enum class RingPlanner { kOptimal, kNearest };
// "ring" and "nearest", as `run --migration` takes them.
const char* RingPlannerName(RingPlanner planner);

struct RingMovesInput {
  std::vector<int64_t> items;  // per task: the items it holds (>= 1)
  std::vector<int64_t>
      surplus;  // per task: items to give (> 0) or take (< 0); sums to 0, leaves >= 1
  std::vector<double> c_next;  // per task: seconds per item over its link to task i + 1 (> 0)
  std::vector<double> c_prev;  // per task: seconds per item over its link to task i - 1 (> 0)
};

struct RingMove {
  size_t from = 0, to = 0;  // neighbours on the ring
  int64_t items = 0;
  int wave = 0;  // runs once every move of the earlier waves has ended
  bool operator==(const RingMove&) const = default;
};

struct RingMoves {
  std::string ring_case;  // ring.h's case of the optimal plan ("bi-hom", "bi-het"), else "nearest"
  std::vector<int64_t> flows;  // net items over link i -> i + 1 (negative: i + 1 -> i)
  double planned_time = 0;  // the one-port simulator's makespan of these flows (ring_simulator.h)
  double lower_bound = 0;   // System 2's bound for the ring (the best any plan can do)
  std::vector<RingMove> moves;  // by wave, then by link
};

// Errors name the problem (sizes, a task left without items, sums not zero, a cost not > 0).
Result<RingMoves> PlanRingMoves(const RingMovesInput& in, RingPlanner planner);

// The nearest-neighbour flows: System 2's conservation (ring.h NetFlows) with the circulation
// x that minimises sum_i |f_i|, the median of -(delta_1 + ... + delta_i) over i = 0..n-1.
std::vector<int64_t> NearestFlows(const std::vector<int64_t>& delta);

// Net flows of a plan's transfers; a pure circulation (every link carrying items the same way
// round) is taken out, as it moves items without changing any load.
std::vector<int64_t> FlowsOfTransfers(size_t n, const std::vector<Transfer>& transfers);

// One move per link with a non-zero flow, in waves: wave w holds every move whose source can
// give it from what it holds once waves < w ended (keeping >= 1 item). Requires flows that
// conserve (`items` - outflow + inflow >= 1 for every task) and carry no pure circulation.
std::vector<RingMove> RingWaves(const std::vector<int64_t>& items,
                                const std::vector<int64_t>& flows);

}  // namespace aiac::redistribution
