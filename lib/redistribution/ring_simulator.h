// A one-port event simulator for data redistribution on a ring (ring-redistribution.md
// section 2): it replays a plan item by item and returns the schedule and its makespan.
//
// A plan gives each processor an ordered list of operations "send `items` items to my
// successor (or predecessor), not before `release`". Each item takes c_{i,i+1} (c_{i,i-1}) time
// units on its link. A processor forwards only items it holds (an item counts as held once its
// transfer ended); it sends one item at a time; in the bidirectional case it also receives one
// item at a time (when two neighbours could start sending to it at once, the one sending towards
// the successor goes first). Items start as soon as these rules allow. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace aiac::redistribution {

struct RingOp {
  bool to_next = true;  // to P_{i+1}, else to P_{i-1}
  int64_t items = 0;
  double release = 0;  // earliest start of the first item
};

// A run of items over one link without pause: end - start = items x cost.
struct Transfer {
  int from, to;
  int64_t items;
  double start, end;
};

struct RingSchedule {
  bool complete = false;  // false: some operation could never start (no item to forward)
  double makespan = 0;
  std::vector<Transfer> transfers;  // by start time, then sender
  std::vector<int64_t> final_loads;
};

RingSchedule SimulateRing(const std::vector<int64_t>& loads, const std::vector<double>& c_next,
                          const std::vector<double>& c_prev, bool bidirectional,
                          const std::vector<std::vector<RingOp>>& ops);
// The general event-driven replay (SimulateRing uses a faster exact walk for unidirectional
// plans in which some processor receives nothing). With `batch`, items that are sure to go
// back to back are handled as one run; without, strictly one item per event. Exposed so tests
// can check that all of these give the same schedule.
RingSchedule SimulateRingEvents(const std::vector<int64_t>& loads,
                                const std::vector<double>& c_next,
                                const std::vector<double>& c_prev, bool bidirectional,
                                const std::vector<std::vector<RingOp>>& ops, bool batch);

}  // namespace aiac::redistribution
