// Data redistribution on processor rings (ring-redistribution.md): processors 0..n-1, P_i holds
// loads[i] items and must end with loads[i] - delta[i]; a link P_i -> P_{i+1} takes c_next[i]
// time units per item, P_i -> P_{i-1} takes c_prev[i] (bidirectional rings only). One-port model
// (section 2). The case is read from the input (all capacities equal: homogeneous):
//
//   uni-hom  Algorithm 1, optimal, bound Lemma 1
//   uni-het  Algorithm 2, optimal, time of Lemma 2
//   bi-hom   Algorithm 3, optimal, bound Lemma 3
//   bi-het   System 2 as a rational LP (its optimum is the bound), rounded to integers the way
//            that keeps the optimum; valid as is under the light-redistribution hypothesis
//            (no processor sends more than it holds at first). Outside it, a heuristic: nearby
//            integer circulations and both send orders, replayed, the fastest kept.
//
// Every plan is replayed by the one-port simulator (ring_simulator.h); `time` is the
// simulator's makespan. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "redistribution/ring_simulator.h"

namespace aiac::redistribution {

struct RingInput {
  bool bidirectional = false;
  std::vector<int64_t> loads;
  std::vector<int64_t> delta;
  std::vector<double> c_next;
  std::vector<double> c_prev;  // bidirectional only
};

struct RingPlan {
  std::string ring_case;  // "uni-hom", "uni-het", "bi-hom", "bi-het"
  double time = 0;        // the simulator's makespan of the plan
  double lower_bound = 0;
  // Proven optimal: time equals the bound, or (bi-het, light) the rounded System 2 solution,
  // optimal among integer schedules although the rational bound may be lower.
  bool optimal = false;
  std::optional<bool> light;  // bi-het only: whether the light hypothesis held
  std::vector<Transfer> transfers;
};

// Lengths, n >= 2, sum of delta 0, loads >= 1 before and after, positive costs.
Status CheckRingInput(const RingInput& in);
// Requires CheckRingInput(in).ok().
Result<RingPlan> PlanRing(const RingInput& in);

// delta_{k,k+l}: sum of delta over the slice P_k..P_{k+l} (indices mod n).
int64_t SliceImbalance(const std::vector<int64_t>& delta, int k, int l);
// Lemma 1 without c: max over slices of |delta_{k,k+l}|.
int64_t MaxSliceImbalance(const std::vector<int64_t>& delta);
// Items P_i sends to P_{i+1} in Algorithms 1 and 2: delta_{start,i} (all >= 0, one of them 0).
std::vector<int64_t> UnidirectionalFlows(const std::vector<int64_t>& delta);
// Lemma 3 without c: max(max_i |delta_i|, max over slices of 2+ processors of ceil(|delta|/2)).
int64_t BidirectionalHomogeneousBound(const std::vector<int64_t>& delta);
// Algorithm 3: the single-item sends of each step (pairs from -> to), step 1 first.
std::vector<std::vector<std::pair<int, int>>> Algorithm3Steps(std::vector<int64_t> delta);
// Net items crossing each link P_i -> P_{i+1} for circulation x: x + delta_1 + ... + delta_i
// (index 0 carries x); negative means P_{i+1} -> P_i.
std::vector<int64_t> NetFlows(const std::vector<int64_t>& delta, int64_t x);
// The simulator's operations for integer net flows: each processor sends over the link to its
// successor, then the one to its predecessor (next_first), or the other way round (Lemma 4).
std::vector<std::vector<RingOp>> OpsForFlows(const std::vector<int64_t>& net, bool next_first);
// The one-port bound of System 2 for integer net flows: max over processors of their sending
// time and of their receiving time.
double PortTime(const RingInput& in, const std::vector<int64_t>& net);

}  // namespace aiac::redistribution
