#include "apps/synthetic/synthetic_app.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <set>

namespace aiac::synthetic {
namespace {

Result<uint64_t> ParseCount(const std::string& key, const std::string& text, uint64_t lo,
                            uint64_t hi) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi) {
    return InvalidArgument("synthetic: params." + key + " must be an integer in " +
                           std::to_string(lo) + ".." + std::to_string(hi) + ", not '" + text + "'");
  }
  return v;
}

// The expected cost of a step of any item: the hot window covers floor(hot_fraction x items)
// of them at hot_factor times the base.
double MeanStepCost(const WorkloadSpec& spec) {
  const double hot = std::floor(spec.hot_fraction * spec.items) / spec.items;
  return spec.base_cost * (1 + hot * (spec.hot_factor - 1));
}

class SyntheticTask final : public app::Task {
 public:
  SyntheticTask(const WorkloadSpec& spec, std::vector<Item> items)
      : spec_(spec), items_(std::move(items)) {}

  std::vector<uint32_t> Dependencies() const override { return {}; }
  Status Absorb(uint32_t, std::string_view) override { return Status::Ok(); }

  Result<bool> Iterate() override {
    bool stepped = false;
    for (Item& it : items_) {
      if (it.done < spec_.iterations) {
        work_done_ += StepCost(spec_, it.id, it.done);
        Step(spec_, it);
        stepped = true;
      }
    }
    return stepped;
  }

  std::vector<app::Outgoing> TakeOutgoing() override { return {}; }

  // The share of the workload's steps this task still has to take, for progress lines.
  double LocalChange() const override {
    uint64_t left = 0;
    for (const Item& it : items_) left += spec_.iterations - it.done;
    return items_.empty() ? 0
                          : static_cast<double>(left) /
                                (static_cast<double>(items_.size()) * spec_.iterations);
  }
  bool LocallyConverged() const override {
    for (const Item& it : items_) {
      if (it.done < spec_.iterations) return false;
    }
    return true;
  }

  double WorkDone() const override { return work_done_; }
  // What the task can tell without looking ahead: the steps left in the current phase of the
  // schedule at the cost they have now, and the steps after it at the expected cost of a step
  // (the hot window lands anywhere), so that a task holding the hot window now does not look
  // four times as loaded for the rest of the run.
  double RemainingWork() const override {
    double work = 0;
    for (const Item& it : items_) work += RemainingOf(it);
    return work;
  }
  int64_t ItemCount() const override { return static_cast<int64_t>(items_.size()); }
  // Items from the end of the list (the last imported first) while their remaining work stays
  // within `work`. Any task can take them (`to` does not matter).
  Result<std::string> ExportItems(double work, uint32_t /*to*/) override {
    size_t keep = items_.size();
    double taken = 0;
    while (keep > 0 && taken + RemainingOf(items_[keep - 1]) <= work)
      taken += RemainingOf(items_[--keep]);
    std::vector<Item> out(items_.begin() + static_cast<std::ptrdiff_t>(keep), items_.end());
    items_.resize(keep);
    return EncodeItems(out, spec_.item_bytes);
  }
  Status ImportItems(std::string_view bytes) override {
    AIAC_ASSIGN_OR_RETURN(auto items, DecodeItems(bytes, spec_));
    std::set<uint32_t> held;
    for (const Item& it : items_) held.insert(it.id);
    for (const Item& it : items) {
      if (!held.insert(it.id).second) {
        return InvalidArgument("synthetic: item " + std::to_string(it.id) +
                               " is already held here");
      }
    }
    items_.insert(items_.end(), items.begin(), items.end());
    return Status::Ok();
  }

  Status DropItems(std::string_view bytes) override {
    AIAC_ASSIGN_OR_RETURN(auto items, DecodeItems(bytes, spec_));
    std::set<uint32_t> drop;
    for (const Item& it : items) {
      if (!drop.insert(it.id).second)
        return InvalidArgument("synthetic: item " + std::to_string(it.id) +
                               " is twice in the items to drop");
    }
    size_t held = 0;
    for (const Item& it : items_) held += drop.count(it.id);
    if (held != drop.size()) {
      return InvalidArgument("synthetic: " + std::to_string(drop.size() - held) +
                             " of the items to drop are not held here");
    }
    std::erase_if(items_, [&](const Item& it) { return drop.count(it.id) > 0; });
    return Status::Ok();
  }

  std::string SaveState() const override { return EncodeItems(items_, spec_.item_bytes); }
  Status RestoreState(std::string_view state) override {
    AIAC_ASSIGN_OR_RETURN(auto items, DecodeItems(state, spec_));
    items_ = std::move(items);
    return Status::Ok();
  }
  std::string ResultSlice() const override { return EncodeItems(items_, spec_.item_bytes); }

 private:
  double RemainingOf(const Item& it) const {
    if (it.done >= spec_.iterations) return 0.0;
    const uint32_t phase_end =
        std::min(spec_.iterations, (it.done / spec_.phase_iterations + 1) * spec_.phase_iterations);
    return static_cast<double>(phase_end - it.done) * StepCost(spec_, it.id, it.done) +
           static_cast<double>(spec_.iterations - phase_end) * MeanStepCost(spec_);
  }

  WorkloadSpec spec_;
  std::vector<Item> items_;
  double work_done_ = 0;  // not in the state: a restored task counts again from 0
};

}  // namespace

Result<WorkloadSpec> ParseWorkloadSpec(const app::JobParams& params) {
  static const std::set<std::string> kKnown = {
      "items",      "iterations", "base_cost", "phase_iterations", "hot_fraction",
      "hot_factor", "seed",       "verify",    "item_bytes"};
  for (const auto& [key, value] : params.values) {
    if (!kKnown.count(key)) return InvalidArgument("synthetic: unknown parameter params." + key);
  }
  WorkloadSpec spec;
  struct Field {
    const char* key;
    uint32_t* value;
    uint64_t lo, hi;
  };
  for (const Field& f : {Field{"items", &spec.items, 1, 100000000},
                         Field{"iterations", &spec.iterations, 1, 1000000},
                         Field{"base_cost", &spec.base_cost, 1, 1000000},
                         Field{"phase_iterations", &spec.phase_iterations, 1, 1000000},
                         Field{"hot_factor", &spec.hot_factor, 1, 1000},
                         Field{"item_bytes", &spec.item_bytes, 0, 1 << 20}}) {
    if (const std::string* s = params.Find(f.key)) {
      AIAC_ASSIGN_OR_RETURN(auto v, ParseCount(f.key, *s, f.lo, f.hi));
      *f.value = static_cast<uint32_t>(v);
    }
  }
  if (const std::string* s = params.Find("seed")) {
    AIAC_ASSIGN_OR_RETURN(auto v, ParseCount("seed", *s, 0, UINT64_MAX));
    spec.seed = v;
  }
  if (const std::string* s = params.Find("hot_fraction")) {
    char* end = nullptr;
    const double v = std::strtod(s->c_str(), &end);
    if (s->empty() || end != s->c_str() + s->size() || !(v >= 0 && v <= 1)) {
      return InvalidArgument("synthetic: params.hot_fraction must be a number in [0, 1], not '" +
                             *s + "'");
    }
    spec.hot_fraction = v;
  }
  if (const std::string* s = params.Find("verify")) {
    if (*s != "true" && *s != "false")
      return InvalidArgument("synthetic: params.verify must be true or false");
    spec.verify = *s == "true";
  }
  if (static_cast<uint64_t>(spec.base_cost) * spec.hot_factor > 100000000) {
    return InvalidArgument("synthetic: base_cost x hot_factor must be at most 100000000");
  }
  if (static_cast<uint64_t>(spec.items) * (16 + spec.item_bytes) > (uint64_t{1} << 31)) {
    return InvalidArgument("synthetic: items x (16 + item_bytes) must be at most 2 GiB");
  }
  return spec;
}

app::JobPlan SyntheticApp::Plan(const WorkloadSpec& spec,
                                const std::vector<ItemRanges>& split) const {
  app::JobPlan plan;
  plan.graph.resize(split.size());
  for (size_t t = 0; t < split.size(); ++t) {
    // e_t: the task's expected work, its item count times the mean step cost.
    const double mean_cost = MeanStepCost(spec);
    uint64_t count = 0;
    for (const auto& [b, e] : split[t]) count += e - b;
    plan.graph[t].cost = std::max(1.0, static_cast<double>(count) * mean_cost * spec.iterations);
    plan.slices.push_back(EncodeRanges(split[t]));
  }
  return plan;
}

Result<app::JobPlan> SyntheticApp::Prepare(const app::JobParams& params) {
  AIAC_ASSIGN_OR_RETURN(auto spec, ParseWorkloadSpec(params));
  if (params.tasks < 1 || params.tasks > spec.items) {
    return InvalidArgument("synthetic: " + std::to_string(params.tasks) + " tasks for " +
                           std::to_string(spec.items) + " items (at least one item per task)");
  }
  return Plan(spec, SplitItems(spec.items, params.tasks));
}

Result<std::optional<app::JobPlan>> SyntheticApp::Reweigh(const app::JobParams& params,
                                                          const std::vector<double>& task_powers) {
  AIAC_ASSIGN_OR_RETURN(auto spec, ParseWorkloadSpec(params));
  if (task_powers.size() != params.tasks || params.tasks > spec.items) {
    return InvalidArgument("synthetic: " + std::to_string(task_powers.size()) + " powers for " +
                           std::to_string(params.tasks) + " tasks");
  }
  for (double p : task_powers) {
    if (!(p > 0) || !std::isfinite(p))
      return InvalidArgument("synthetic: a daemon's power must be positive");
  }
  return std::optional<app::JobPlan>(Plan(spec, SplitItems(spec.items, params.tasks, task_powers)));
}

Result<std::unique_ptr<app::Task>> SyntheticApp::MakeTask(const app::JobParams& params,
                                                          uint32_t task, std::string_view slice) {
  (void)task;
  AIAC_ASSIGN_OR_RETURN(auto spec, ParseWorkloadSpec(params));
  AIAC_ASSIGN_OR_RETURN(auto ranges, DecodeRanges(slice, spec.items));
  return NewSyntheticTask(spec, ranges);
}

Result<app::GatherReport> SyntheticApp::Gather(const app::JobParams& params,
                                               const std::vector<std::string>& slices) {
  AIAC_ASSIGN_OR_RETURN(auto spec, ParseWorkloadSpec(params));
  std::vector<Item> all;
  std::vector<char> seen(spec.items, 0);
  uint64_t duplicated = 0, unfinished = 0;
  for (size_t t = 0; t < slices.size(); ++t) {
    auto items = DecodeItems(slices[t], spec);
    if (!items.ok())
      return Corruption("synthetic: result of task " + std::to_string(t) + ": " +
                        items.status().message());
    for (const Item& it : *items) {
      if (seen[it.id]++) ++duplicated;
      if (it.done < spec.iterations) ++unfinished;
      all.push_back(it);
    }
  }
  uint64_t missing = 0;
  for (char s : seen) missing += s == 0;
  app::GatherReport report;
  const uint64_t checksum = Checksum(all);
  report.numbers["checksum"] = static_cast<double>(checksum);
  report.numbers["items"] = static_cast<double>(all.size());
  // The workload again, in this process: as much work as the whole run, so only when asked.
  const uint64_t expected = spec.verify ? ExpectedChecksum(spec) : checksum;
  if (spec.verify) report.numbers["expected_checksum"] = static_cast<double>(expected);
  if (missing > 0 || duplicated > 0) {
    report.status = app::GatherStatus::kDiverged;
    report.error = std::to_string(missing) + " items missing and " + std::to_string(duplicated) +
                   " held twice in the gathered result";
  } else if (unfinished > 0) {
    report.status = app::GatherStatus::kUnconverged;
    report.error = std::to_string(unfinished) + " items have not taken their " +
                   std::to_string(spec.iterations) + " steps";
  } else if (checksum != expected) {
    report.status = app::GatherStatus::kDiverged;
    report.error = "checksum " + std::to_string(checksum) + " is not the workload's " +
                   std::to_string(expected);
  }
  return report;
}

std::unique_ptr<app::Task> NewSyntheticTask(const WorkloadSpec& spec, const ItemRanges& ranges) {
  std::vector<Item> items;
  for (const auto& [begin, end] : ranges) {
    for (uint32_t i = begin; i < end; ++i) items.push_back(InitialItem(spec, i));
  }
  return std::make_unique<SyntheticTask>(spec, std::move(items));
}

}  // namespace aiac::synthetic
