#include "redistribution/ring.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

#include "redistribution/lp.h"

namespace aiac::redistribution {
namespace {

int Mod(int a, int n) { return ((a % n) + n) % n; }

bool AllEqual(const std::vector<double>& a, double v) {
  return std::all_of(a.begin(), a.end(), [&](double x) { return x == v; });
}

bool Near(double a, double b) {
  return std::abs(a - b) <= 1e-9 * std::max(1.0, std::max(std::abs(a), std::abs(b)));
}

RingPlan FromSchedule(std::string ring_case, const RingSchedule& s, double bound) {
  RingPlan p;
  p.ring_case = std::move(ring_case);
  p.time = s.makespan;
  p.lower_bound = bound;
  p.optimal = Near(s.makespan, bound);
  p.transfers = s.transfers;
  return p;
}

}  // namespace

std::vector<std::vector<RingOp>> OpsForFlows(const std::vector<int64_t>& net, bool next_first) {
  const int n = static_cast<int>(net.size());
  std::vector<std::vector<RingOp>> ops(n);
  for (int i = 0; i < n; ++i) {
    const int64_t to_next = std::max<int64_t>(0, net[i]);               // P_i -> P_{i+1}
    const int64_t to_prev = std::max<int64_t>(0, -net[Mod(i - 1, n)]);  // P_i -> P_{i-1}
    RingOp a{true, to_next, 0}, b{false, to_prev, 0};
    if (next_first) {
      ops[i] = {a, b};
    } else {
      ops[i] = {b, a};
    }
  }
  return ops;
}

Status CheckRingInput(const RingInput& in) {
  const size_t n = in.loads.size();
  if (n < 2) return InvalidArgument("a ring needs at least 2 processors");
  if (in.delta.size() != n || in.c_next.size() != n) {
    return InvalidArgument("loads, delta and c_next must have the same length (" +
                           std::to_string(n) + ")");
  }
  if (in.bidirectional && in.c_prev.empty())
    return InvalidArgument("c_prev is required for a bidirectional ring");
  if (in.bidirectional && in.c_prev.size() != n) {
    return InvalidArgument("c_prev must have the same length as loads (" + std::to_string(n) + ")");
  }
  int64_t sum = 0;
  for (size_t i = 0; i < n; ++i) {
    sum += in.delta[i];
    if (in.loads[i] < 1)
      return InvalidArgument("processor " + std::to_string(i) + " holds less than 1 item before");
    if (in.loads[i] - in.delta[i] < 1) {
      return InvalidArgument("processor " + std::to_string(i) +
                             " would hold less than 1 item after");
    }
  }
  if (sum != 0) return InvalidArgument("the sum of delta is " + std::to_string(sum) + ", not 0");
  for (const auto* c : {&in.c_next, &in.c_prev}) {
    if (c == &in.c_prev && !in.bidirectional) continue;
    for (double v : *c) {
      if (!std::isfinite(v) || v <= 0) {
        return InvalidArgument(std::string(c == &in.c_next ? "c_next" : "c_prev") +
                               " must be positive");
      }
    }
  }
  return Status::Ok();
}

int64_t SliceImbalance(const std::vector<int64_t>& delta, int k, int l) {
  const int n = static_cast<int>(delta.size());
  int64_t s = 0;
  for (int j = 0; j <= l; ++j) s += delta[Mod(k + j, n)];
  return s;
}

int64_t MaxSliceImbalance(const std::vector<int64_t>& delta) {
  // Lemma 1: max over k, l of |delta_{k,k+l}|; prefix sums make it O(n^2).
  const int n = static_cast<int>(delta.size());
  int64_t best = 0;
  for (int k = 0; k < n; ++k) {
    int64_t s = 0;
    for (int l = 0; l < n; ++l) {
      s += delta[Mod(k + l, n)];
      best = std::max(best, std::abs(s));
    }
  }
  return best;
}

std::vector<int64_t> UnidirectionalFlows(const std::vector<int64_t>& delta) {
  // S_i = S_{i-1} + delta_i; the least non-negative solution is delta_{start,i} where
  // C_{start,end} has the largest imbalance (Algorithms 1 and 2).
  const int n = static_cast<int>(delta.size());
  std::vector<int64_t> prefix(n);
  int64_t s = 0;
  for (int i = 0; i < n; ++i) prefix[i] = (s += delta[i]);
  const int64_t lowest = *std::min_element(prefix.begin(), prefix.end());
  std::vector<int64_t> flows(n);
  for (int i = 0; i < n; ++i) flows[i] = prefix[i] - lowest;
  return flows;
}

int64_t BidirectionalHomogeneousBound(const std::vector<int64_t>& delta) {
  // Lemma 3: max{ max_i |delta_i|, max_{i, 1 <= l <= n-1} ceil(|delta_{i,i+l}| / 2) }. The
  // imbalances sum to 0, so a slice that wraps round has the opposite sum of the (linear) slice
  // it leaves out: the largest |slice sum| is max Q - min Q over the prefix sums Q_0 = 0,
  // Q_j = delta_0 + ... + delta_{j-1}. O(n).
  int64_t best = 0, q = 0, lo = 0, hi = 0;
  for (int64_t d : delta) {
    best = std::max(best, std::abs(d));
    q += d;
    lo = std::min(lo, q);
    hi = std::max(hi, q);
  }
  return std::max(best, (hi - lo + 1) / 2);
}

namespace {

// One step's sends of Algorithm 3: per processor, bit 1 P_i -> P_{i+1}, bit 2 P_i -> P_{i-1}
// (one flag per link, like a set).
class StepSends {
 public:
  explicit StepSends(int n) : n_(n), sends_(n, 0) {}
  void Send(int from, int to) { sends_[from] |= (to == Mod(from + 1, n_)) ? 1 : 2; }
  bool SendsTo(int from, int to) const {
    return (sends_[from] & ((to == Mod(from + 1, n_)) ? 1 : 2)) != 0;
  }
  bool SendsAny(int i) const { return sends_[i] != 0; }
  bool Receives(int i) const {
    return (sends_[Mod(i - 1, n_)] & 1) || (sends_[Mod(i + 1, n_)] & 2);
  }
  // The sends ordered by (from, to), each link once.
  std::vector<std::pair<int, int>> Ordered() const {
    std::vector<std::pair<int, int>> step;
    for (int i = 0; i < n_; ++i) {
      int a = (sends_[i] & 1) ? Mod(i + 1, n_) : -1, b = (sends_[i] & 2) ? Mod(i - 1, n_) : -1;
      if (a == b) b = -1;  // n = 2: both neighbours are the same processor
      if (a > b) std::swap(a, b);
      if (a >= 0) step.push_back({i, a});
      if (b >= 0) step.push_back({i, b});
    }
    return step;
  }

 private:
  int n_;
  std::vector<uint8_t> sends_;
};

// Slices C_{k,l} of 1..n-1 processors: sum = Q[k + len] - Q[k] over the doubled prefix sums. A
// sliding window of prefix values tells, for each start k (end l), whether a slice with a sum
// in `targets` starts (ends) there: O(n) per step. Every prefix value lies within 2 dmax of the
// others (Lemma 3's bound), so the window is a flat array.
class SliceFinder {
 public:
  explicit SliceFinder(const std::vector<int64_t>& delta)
      : n_(static_cast<int>(delta.size())), q_(2 * n_ + 1) {
    q_[0] = 0;
    for (int j = 0; j < 2 * n_; ++j) q_[j + 1] = q_[j] + delta[j % n_];
    base_ = *std::min_element(q_.begin(), q_.end());
    span_ = *std::max_element(q_.begin(), q_.end()) - base_ + 1;
  }

  // found[i]: a slice whose sum is one of `targets` starts at P_i (at_start), or ends there.
  std::vector<bool> Find(bool at_start, const std::vector<int64_t>& targets) {
    counts_.assign(static_cast<size_t>(span_), 0);
    std::vector<bool> found(n_, false);
    if (at_start) {  // window Q[k+1 .. k+n-1]
      for (int j = 1; j <= n_ - 1; ++j) Count(q_[j], +1);
      for (int k = 0; k < n_; ++k) {
        for (int64_t t : targets) found[k] = found[k] || Has(q_[k] + t);
        Count(q_[k + 1], -1);
        Count(q_[k + n_], +1);
      }
    } else {  // slice ending at l, e = l + n: window Q[e+2-n .. e]
      for (int j = 2; j <= n_; ++j) Count(q_[j], +1);
      for (int l = 0; l < n_; ++l) {
        const int e = l + n_;
        for (int64_t t : targets) found[l] = found[l] || Has(q_[e + 1] - t);
        Count(q_[e + 2 - n_], -1);
        Count(q_[e + 1], +1);
      }
    }
    return found;
  }

 private:
  void Count(int64_t v, int by) { counts_[static_cast<size_t>(v - base_)] += by; }
  bool Has(int64_t v) const {
    return v >= base_ && v < base_ + span_ && counts_[static_cast<size_t>(v - base_)] > 0;
  }

  int n_;
  std::vector<int64_t> q_;
  int64_t base_ = 0, span_ = 0;
  std::vector<int> counts_;  // the sliding window of prefix values, offset by their minimum
};

// Lines 3-18 of Algorithm 3: the ends of the slices whose imbalance reaches dmax send or receive.
void SliceSends(const std::vector<int64_t>& delta, int64_t dmax, StepSends& sends) {
  const int n = static_cast<int>(delta.size());
  SliceFinder finder(delta);
  auto rule = [&](const std::vector<int64_t>& targets, bool at_start, bool outward) {
    if (targets.empty()) return;
    const std::vector<bool> found = finder.Find(at_start, targets);
    for (int i = 0; i < n; ++i) {
      if (!found[i]) continue;
      const int outside = at_start ? Mod(i - 1, n) : Mod(i + 1, n);
      if (outward) {
        sends.Send(i, outside);  // the slice sends through this end
      } else {
        sends.Send(outside, i);  // the slice receives through this end
      }
    }
  };
  if (dmax != 2) {  // lines 3-9: sums d with ceil(|d| / 2) = dmax and |d| > 1
    std::vector<int64_t> pos, neg;
    for (int64_t d : {2 * dmax - 1, 2 * dmax}) {
      if (d > 1) {
        pos.push_back(d);
        neg.push_back(-d);
      }
    }
    rule(pos, true, true);        // P_k sends to P_{k-1}
    rule(pos, false, true);       // P_l sends to P_{l+1}
    rule(neg, true, false);       // P_{k-1} sends to P_k
    rule(neg, false, false);      // P_{l+1} sends to P_l
  } else {                        // lines 10-18 (|d| <= 4 here)
    rule({3, 4}, false, true);    // delta_{k,l} >= 3: P_l sends to P_{l+1}
    rule({4}, true, true);        // delta_{k,l} = 4: P_k sends to P_{k-1}
    rule({-3, -4}, true, false);  // delta_{k,l} <= -3: P_{k-1} sends to P_k
    rule({-4}, false, false);     // delta_{k,l} = -4: P_{l+1} sends to P_l
  }
}

// Lines 19-30 of Algorithm 3: the most loaded processors that send nothing yet send, the least
// loaded that receive nothing receive, and (dmax = 1) balanced processors pass items on.
void ProcessorSends(const std::vector<int64_t>& delta, int64_t dmax, StepSends& sends) {
  const int n = static_cast<int>(delta.size());
  std::vector<bool> sending(n, false), receiving(n, false);
  for (int i = 0; i < n; ++i) {
    sending[i] = sends.SendsAny(i);
    receiving[i] = sends.Receives(i);
  }
  for (int i = 0; i < n; ++i) {  // lines 19-21
    if (delta[i] == dmax && !sending[i]) {
      sends.Send(i, Mod(i + 1, n));
      sending[i] = receiving[Mod(i + 1, n)] = true;
    }
  }
  for (int i = 0; i < n; ++i) {  // lines 22-24
    if (delta[i] == -dmax && !receiving[i]) {
      sends.Send(Mod(i - 1, n), i);
      sending[Mod(i - 1, n)] = receiving[i] = true;
    }
  }
  if (dmax != 1) return;
  // Lines 25-30: balanced processors pass items on (to a fixpoint along chains).
  for (bool grew = true; grew;) {
    grew = false;
    for (int i = 0; i < n; ++i) {
      if (delta[i] != 0) continue;
      if (sends.SendsTo(Mod(i - 1, n), i) && !sends.SendsTo(i, Mod(i + 1, n))) {
        sends.Send(i, Mod(i + 1, n));
        grew = true;
      }
      if (sends.SendsTo(Mod(i + 1, n), i) && !sends.SendsTo(i, Mod(i - 1, n))) {
        sends.Send(i, Mod(i - 1, n));
        grew = true;
      }
    }
  }
}

}  // namespace

std::vector<std::vector<std::pair<int, int>>> Algorithm3Steps(std::vector<int64_t> delta) {
  const int n = static_cast<int>(delta.size());
  std::vector<std::vector<std::pair<int, int>>> steps;
  for (;;) {
    const int64_t dmax = BidirectionalHomogeneousBound(delta);  // line 1
    if (dmax < 1) break;                                        // line 2
    StepSends sends(n);
    SliceSends(delta, dmax, sends);
    ProcessorSends(delta, dmax, sends);
    std::vector<std::pair<int, int>> step = sends.Ordered();
    for (const auto& [from, to] : step) {
      --delta[from];
      ++delta[to];
    }
    steps.push_back(std::move(step));
  }
  return steps;
}

std::vector<int64_t> NetFlows(const std::vector<int64_t>& delta, int64_t x) {
  const int n = static_cast<int>(delta.size());
  // Conservation (System 2, third line): f_i - f_{i-1} = delta_i.
  std::vector<int64_t> f(n);
  f[0] = x;
  for (int i = 1; i < n; ++i) f[i] = f[i - 1] + delta[i];
  return f;
}

double PortTime(const RingInput& in, const std::vector<int64_t>& net) {
  const int n = static_cast<int>(net.size());
  double worst = 0;
  for (int i = 0; i < n; ++i) {
    const double to_next = static_cast<double>(std::max<int64_t>(0, net[i]));
    const double to_prev = static_cast<double>(std::max<int64_t>(0, -net[Mod(i - 1, n)]));
    const double from_prev = static_cast<double>(std::max<int64_t>(0, net[Mod(i - 1, n)]));
    const double from_next = static_cast<double>(std::max<int64_t>(0, -net[i]));
    // System 2, fourth and fifth lines.
    worst = std::max(worst, to_next * in.c_next[i] + to_prev * in.c_prev[i]);
    worst = std::max(worst,
                     from_prev * in.c_next[Mod(i - 1, n)] + from_next * in.c_prev[Mod(i + 1, n)]);
  }
  return worst;
}

// System 2 (section 6) solved as a rational LP for the bound, rounded the way that keeps the
// optimum, replayed with Lemma 4's schedule; outside the light hypothesis, nearby circulations
// and both send orders are replayed and the fastest kept.
static Result<RingPlan> CirculationPlan(const RingInput& in, const std::string& ring_case) {
  const int n = static_cast<int>(in.loads.size());
  // System 2 as a rational LP: variables S_{i,i+1} (i), S_{i,i-1} (n + i), tau (2n).
  LinearProgram lp;
  lp.method = LinearProgram::Method::kDual;  // 5.6x faster than the primal on this program
  for (int k = 0; k < 2 * n; ++k) lp.AddVariable(0.0, 0.0);
  const int tau = lp.AddVariable(1.0, 0.0);
  auto next = [](int i) { return i; };
  auto prev = [n](int i) { return n + i; };
  for (int i = 0; i < n; ++i) {
    const int ip = Mod(i + 1, n), im = Mod(i - 1, n);
    // S_{i,i+1} + S_{i,i-1} - S_{i+1,i} - S_{i-1,i} = delta_i
    lp.rows.push_back({{{next(i), 1}, {prev(i), 1}, {prev(ip), -1}, {next(im), -1}},
                       static_cast<double>(in.delta[i]),
                       static_cast<double>(in.delta[i])});
    // sending: S_{i,i+1} c_{i,i+1} + S_{i,i-1} c_{i,i-1} <= tau
    lp.rows.push_back(
        {{{next(i), in.c_next[i]}, {prev(i), in.c_prev[i]}, {tau, -1}}, -kInfinity, 0});
    // receiving: S_{i+1,i} c_{i+1,i} + S_{i-1,i} c_{i-1,i} <= tau
    lp.rows.push_back(
        {{{prev(ip), in.c_prev[ip]}, {next(im), in.c_next[im]}, {tau, -1}}, -kInfinity, 0});
  }
  AIAC_ASSIGN_OR_RETURN(auto solution, Minimize(lp));
  const double bound = solution.objective;
  // The rational circulation on link 0 -> 1; "one of the two natural ways of rounding" (round
  // it down or up, every other link following by conservation) keeps the optimum.
  const double x = solution.x[next(0)] - solution.x[prev(1)];
  const int64_t lo = static_cast<int64_t>(std::floor(x + 1e-9)),
                hi = static_cast<int64_t>(std::ceil(x - 1e-9));
  int64_t best_x = lo;
  for (int64_t cand : {lo, hi}) {
    if (PortTime(in, NetFlows(in.delta, cand)) < PortTime(in, NetFlows(in.delta, best_x)))
      best_x = cand;
  }
  auto is_light = [&](const std::vector<int64_t>& net) {
    for (int i = 0; i < n; ++i) {
      const int64_t sent = std::max<int64_t>(0, net[i]) + std::max<int64_t>(0, -net[Mod(i - 1, n)]);
      if (sent > in.loads[i]) return false;
    }
    return true;
  };
  const auto net = NetFlows(in.delta, best_x);
  RingSchedule sched = SimulateRing(in.loads, in.c_next, in.c_prev, true, OpsForFlows(net, true));
  const bool light = is_light(net);
  if (!light || !sched.complete || !Near(sched.makespan, PortTime(in, net))) {
    // Heuristic outside the hypothesis: nearby circulations, both send orders, replayed,
    // closest to the integer bound first; stop as soon as one reaches it.
    const double integer_bound = PortTime(in, net);
    for (int64_t d : {0, -1, 1, -2, 2, -3, 3}) {
      for (bool next_first : {true, false}) {
        if (sched.complete && Near(sched.makespan, integer_bound)) break;
        if (d == 0 && next_first) continue;  // replayed above
        const auto cand_net = NetFlows(in.delta, best_x + d);
        RingSchedule s =
            SimulateRing(in.loads, in.c_next, in.c_prev, true, OpsForFlows(cand_net, next_first));
        if (s.complete && (!sched.complete || s.makespan < sched.makespan)) sched = std::move(s);
      }
    }
    if (!sched.complete) return Internal("no bidirectional schedule found");
  }
  RingPlan plan = FromSchedule(ring_case, sched, bound);
  plan.light = light;
  // Under the light hypothesis the rounded plan is optimal among integer schedules: any schedule
  // with circulation x needs PortTime(x), which is convex in x and least at best_x. Outside it,
  // the heuristic is optimal only when it meets the rational bound.
  if (light && Near(sched.makespan, PortTime(in, net))) plan.optimal = true;
  return plan;
}

Result<RingPlan> PlanRing(const RingInput& in) {
  const int n = static_cast<int>(in.loads.size());
  const double c = in.c_next[0];
  if (!in.bidirectional) {
    const std::vector<int64_t> flows = UnidirectionalFlows(in.delta);
    std::vector<std::vector<RingOp>> ops(n);
    if (AllEqual(in.c_next, c)) {
      // Algorithm 1: step s (s = 1..delta_max) sends one item on every link whose flow is >= s,
      // during [(s-1) c, s c[: P_i sends during [0, S_i c[ without pause, which is what one
      // operation of S_i items released at 0 replays.
      for (int i = 0; i < n; ++i) ops[i].push_back({true, flows[i], 0});
      const RingSchedule sched = SimulateRing(in.loads, in.c_next, in.c_next, false, ops);
      if (!sched.complete) return Internal("Algorithm 1 plan stalled in the simulator");
      return FromSchedule("uni-hom", sched,
                          static_cast<double>(MaxSliceImbalance(in.delta)) * c);  // Lemma 1
    }
    // Algorithm 2: the same amounts, each sent one by one as soon as possible.
    double lemma2 = 0;
    for (int i = 0; i < n; ++i) {
      ops[i].push_back({true, flows[i], 0});
      lemma2 = std::max(lemma2, static_cast<double>(flows[i]) * in.c_next[i]);  // Lemma 2
    }
    const RingSchedule sched = SimulateRing(in.loads, in.c_next, in.c_next, false, ops);
    if (!sched.complete) return Internal("Algorithm 2 plan stalled in the simulator");
    return FromSchedule("uni-het", sched, lemma2);
  }

  if (AllEqual(in.c_next, c) && AllEqual(in.c_prev, c)) {
    // Algorithm 3: one synchronous step of length c per call.
    const auto steps = Algorithm3Steps(in.delta);
    // Sends in consecutive steps over the same link form one operation released at the first
    // of them: with steps of length c, each next item starts exactly when the last one ends.
    std::vector<std::vector<RingOp>> ops(n);
    std::vector<size_t> last_step(n, SIZE_MAX);
    for (size_t s = 0; s < steps.size(); ++s) {
      for (const auto& [from, to] : steps[s]) {
        const bool to_next = to == Mod(from + 1, n);
        auto& list = ops[from];
        if (!list.empty() && last_step[from] + 1 == s && list.back().to_next == to_next) {
          ++list.back().items;
        } else {
          list.push_back({to_next, 1, static_cast<double>(s) * c});
        }
        last_step[from] = s;
      }
    }
    const double lemma3 =
        static_cast<double>(BidirectionalHomogeneousBound(in.delta)) * c;  // Lemma 3
    const RingSchedule sched = SimulateRing(in.loads, in.c_next, in.c_prev, true, ops);
    RingPlan plan = FromSchedule("bi-hom", sched, lemma3);
    if (sched.complete && plan.optimal) return plan;
    // Algorithm 3's synchronous steps can ask a processor to forward an item it does not hold
    // yet (its intermediate states need not keep one item everywhere). Replayed, such a plan
    // runs longer than the bound; the circulation plan of System 2 may do better on that input.
    auto alternative = CirculationPlan(in, "bi-hom");
    if (alternative.ok() && (!sched.complete || alternative->time < plan.time)) {
      alternative->lower_bound = lemma3;
      alternative->light.reset();
      alternative->optimal = Near(alternative->time, lemma3);
      return alternative;
    }
    if (!sched.complete) return Internal("Algorithm 3 plan stalled in the simulator");
    return plan;
  }

  return CirculationPlan(in, "bi-het");
}

}  // namespace aiac::redistribution
