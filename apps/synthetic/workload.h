// The synthetic adaptive workload (docs/balancing.md), after the synthetic code of the DistPM
// paper (section 5: it "simulates dynamic workload changes on each processor during each
// computation iteration"): `items` independent work items, each advanced `iterations` times.
// Step k of item i costs cost(i, k) units of work, and the costs change over time on a seeded
// schedule: time is cut in phases of `phase_iterations` steps, and in each phase a window of
// hot_fraction x items consecutive items (wrapping round), placed at random from (seed, phase),
// costs hot_factor times the base: a region that needs refinement, moving across the tasks as
// the run goes, so that a static split of the items is unbalanced most of the time.
//
// An item's state after step k depends only on (seed, i, k) and its previous state, never on
// where it was computed: the checksum over all items at the end is the same whatever the
// split, the moves between tasks, or the restores from checkpoints. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace aiac::synthetic {

struct WorkloadSpec {
  uint32_t items = 20000;
  uint32_t iterations = 60;
  uint32_t base_cost = 400;        // units of work of a step outside the hot window (>= 1)
  uint32_t phase_iterations = 10;  // steps per phase of the schedule (>= 1)
  double hot_fraction = 0.25;      // share of the items in the hot window, in [0, 1]
  uint32_t hot_factor = 4;         // cost multiplier inside it (>= 1)
  uint64_t seed = 1;
  // Bytes of data each item carries besides its state (the cells of a refined region, in the
  // DistPM paper's terms): they travel with it when it moves and in checkpoints, so moving items
  // costs what the links make it cost. Deterministic from the item's id, checked when decoded.
  uint32_t item_bytes = 0;
  // The spawner computes the whole workload again to check the gathered checksum (as much work
  // as the run itself).
  bool verify = false;
};

// The units of work of step k (0-based) of item i.
uint32_t StepCost(const WorkloadSpec& spec, uint32_t item, uint32_t k);
// The first item of phase p's hot window.
uint32_t HotStart(const WorkloadSpec& spec, uint32_t phase);

struct Item {
  uint32_t id = 0;
  uint32_t done = 0;  // steps taken, 0..iterations
  uint64_t state = 0;
};

// Item i before its first step.
Item InitialItem(const WorkloadSpec& spec, uint32_t id);
// One step of `item` (done < iterations): cost(i, done) rounds of a 64-bit mix on its state.
void Step(const WorkloadSpec& spec, Item& item);

// The order-independent checksum of finished items: the sum of a mix of (id, state), modulo
// 2^52 so that it is exact as a double in the run's JSON summary.
uint64_t Checksum(const std::vector<Item>& items);
// The checksum the whole workload must end with, computed here in one place (for tests and the
// spawner's check).
uint64_t ExpectedChecksum(const WorkloadSpec& spec);

// Items on the wire (result slices, checkpoints, moves): "asy1", a count, then (id, done, state)
// and `item_bytes` bytes of the item's data each. Decode checks the size, that ids are below
// `items` and steps at most `iterations`, and each item's data.
std::string EncodeItems(const std::vector<Item>& items, uint32_t item_bytes = 0);
Result<std::vector<Item>> DecodeItems(std::string_view bytes, const WorkloadSpec& spec);

// A set of item ids as ascending, disjoint [begin, end) ranges: what a task is given.
using ItemRanges = std::vector<std::pair<uint32_t, uint32_t>>;
std::string EncodeRanges(const ItemRanges& ranges);
Result<ItemRanges> DecodeRanges(std::string_view bytes, uint32_t items);
// `items` split into `tasks` consecutive ranges in proportion to `shares` (empty: equal; else
// `tasks` positive shares), each of at least one item. Requires 1 <= tasks <= items.
std::vector<ItemRanges> SplitItems(uint32_t items, uint32_t tasks,
                                   const std::vector<double>& shares = {});

}  // namespace aiac::synthetic
