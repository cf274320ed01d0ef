#include "apps/ring/ring_app.h"

#include <charconv>
#include <cstring>
#include <optional>

#include "apps/ring/ring_task.h"

namespace aiac::ring {
namespace {

Result<uint64_t> Rounds(const app::JobParams& params) {
  for (const auto& [key, value] : params.values) {
    if (key != "rounds") return InvalidArgument("ring: unknown parameter params." + key);
  }
  const std::string* s = params.Find("rounds");
  if (!s) return InvalidArgument("ring: params.rounds is missing");
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s->data(), s->data() + s->size(), v);
  if (ec != std::errc() || end != s->data() + s->size() || v == 0) {
    return InvalidArgument("ring: params.rounds must be a positive integer, not '" + *s + "'");
  }
  return v;
}

std::string Pack(uint64_t a, uint64_t b) {
  std::string s(16, '\0');
  std::memcpy(s.data(), &a, 8);
  std::memcpy(s.data() + 8, &b, 8);
  return s;
}

bool Unpack(std::string_view s, uint64_t& a, uint64_t& b) {
  if (s.size() != 16) return false;
  std::memcpy(&a, s.data(), 8);
  std::memcpy(&b, s.data() + 8, 8);
  return true;
}

class RingPluginTask final : public app::Task {
 public:
  RingPluginTask(uint32_t task, uint32_t count, uint64_t rounds)
      : ring_(task, count, rounds), task_(task), count_(count) {}

  std::vector<uint32_t> Dependencies() const override { return {(task_ + count_ - 1) % count_}; }

  Status Absorb(uint32_t from, std::string_view bytes) override {
    uint64_t value, iteration;
    if (Unpack(bytes, value, iteration)) pending_ = RingTask::Token{value, iteration};
    return Status::Ok();
  }

  Result<bool> Iterate() override {
    if (!started_) {
      started_ = true;
      out_ = ring_.Start();
      if (out_) return true;
    }
    if (!pending_) return false;
    const uint64_t before = ring_.iterations();
    out_ = ring_.OnToken(pending_->value, pending_->iteration);
    pending_.reset();
    return ring_.iterations() != before;  // a stale copy is no work
  }

  std::vector<app::Outgoing> TakeOutgoing() override {
    std::vector<app::Outgoing> out;
    if (out_) out.push_back({ring_.successor(), Pack(out_->value, out_->iteration)});
    out_.reset();
    return out;
  }

  double LocalChange() const override { return ring_.done() ? 0 : 1; }
  bool LocallyConverged() const override { return ring_.done(); }
  std::string SaveState() const override { return Pack(ring_.value(), ring_.iterations()); }
  Status RestoreState(std::string_view) override {
    return InvalidArgument("ring: a token cannot be restored from a checkpoint");
  }
  std::string ResultSlice() const override { return Pack(ring_.value(), ring_.iterations()); }

 private:
  RingTask ring_;
  uint32_t task_, count_;
  bool started_ = false;
  std::optional<RingTask::Token> pending_, out_;
};

}  // namespace

Result<app::JobPlan> RingApp::Prepare(const app::JobParams& params) {
  AIAC_RETURN_IF_ERROR(Rounds(params).status());  // refused here, before any daemon is asked
  if (params.tasks < 2) return InvalidArgument("ring: needs at least 2 tasks");
  app::JobPlan plan;
  plan.supports_sync = false;
  for (uint32_t t = 0; t < params.tasks; ++t) {
    app::TaskNode node;
    node.edges.push_back({(t + 1) % params.tasks, 1});
    if (params.tasks > 2) node.edges.push_back({(t + params.tasks - 1) % params.tasks, 1});
    plan.graph.push_back(std::move(node));
    plan.slices.emplace_back();
  }
  return plan;
}

Result<std::unique_ptr<app::Task>> RingApp::MakeTask(const app::JobParams& params, uint32_t task,
                                                     std::string_view) {
  AIAC_ASSIGN_OR_RETURN(auto rounds, Rounds(params));
  if (params.tasks < 2 || task >= params.tasks)
    return InvalidArgument("ring: needs at least 2 tasks");
  return std::unique_ptr<app::Task>(new RingPluginTask(task, params.tasks, rounds));
}

Result<app::GatherReport> RingApp::Gather(const app::JobParams& params,
                                          const std::vector<std::string>& slices) {
  AIAC_ASSIGN_OR_RETURN(auto rounds, Rounds(params));
  const uint64_t expected = RingTask::Expected(params.tasks, rounds);
  app::GatherReport report;
  uint64_t value = 0, iterations = 0;
  if (slices.empty() || !Unpack(slices[0], value, iterations))
    return Corruption("ring: task 0 sent no result");
  report.numbers = {{"value", static_cast<double>(value)},
                    {"expected", static_cast<double>(expected)},
                    {"rounds", static_cast<double>(rounds)}};
  if (value != expected) {
    return Internal("ring: task 0 ended with " + std::to_string(value) + ", expected " +
                    std::to_string(expected));
  }
  for (size_t t = 0; t < slices.size(); ++t) {
    if (!Unpack(slices[t], value, iterations) || iterations != rounds) {
      return Internal("ring: task " + std::to_string(t) + " handled " + std::to_string(iterations) +
                      " tokens, expected " + std::to_string(rounds));
    }
  }
  return report;
}

}  // namespace aiac::ring

AIAC_DEFINE_APP(aiac::ring::RingApp)
