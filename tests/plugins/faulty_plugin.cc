// A plugin built to crash, for the tests of app isolation (daemon/app_child.h): the cg app under
// another name ("faulty"), whose task `crash_task` does what `crash_how` says at its
// `crash_at`-th iteration on a daemon (counting those that computed):
//   segv   raises SIGSEGV          abort  calls abort()         throw  lets an exception escape
//   exit   calls exit(3)           hang   never returns         alloc  allocates until it fails
//   spin   computes for ever (for cpu_seconds)
//   slow   takes `crash_seconds` more (with crash_at = 0: to build the task), then goes on
//   none   nothing (the cg app as it is)
// `crash_at = 0`: while the task is built (MakeTask), before any iteration.
// `crash_pace = S`: every task sleeps S seconds after each iteration that computed, whatever the
// fault: a job that lasts as long under the sanitizers as without them, on little CPU, for tests
// that must act while it iterates.
// With `crash_once = "FILE"` (an absolute path: daemons are not told the job file's folder) it
// does so only while FILE does not exist, creating it first: the task's next daemon then runs it
// to the end. A test sees that the fault began when FILE exists.
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "apps/cg/cg_app.h"

namespace {

struct Fault {
  uint32_t task = 0;
  uint64_t at = 3;
  std::string how = "none";
  std::string once;    // marker file, empty: always
  double seconds = 0;  // slow: how much longer
  double pace = 0;     // seconds slept after each iteration that computed, in every task
};

// The cg app's params without the fault's.
aiac::app::JobParams Without(const aiac::app::JobParams& params, Fault* fault) {
  aiac::app::JobParams p = params;
  for (auto it = p.values.begin(); it != p.values.end();) {
    if (it->first.rfind("crash_", 0) != 0) {
      ++it;
      continue;
    }
    if (fault) {
      if (it->first == "crash_task") fault->task = static_cast<uint32_t>(std::stoul(it->second));
      if (it->first == "crash_at") fault->at = std::stoull(it->second);
      if (it->first == "crash_how") fault->how = it->second;
      if (it->first == "crash_once") fault->once = it->second;
      if (it->first == "crash_seconds") fault->seconds = std::stod(it->second);
      if (it->first == "crash_pace") fault->pace = std::stod(it->second);
    }
    it = p.values.erase(it);
  }
  return p;
}

// Throws from `depth` calls down: a backtrace longer than the crash's tail.
[[gnu::noinline]] void ThrowFrom(int depth) {
  if (depth <= 0) throw std::runtime_error("faulty app: an exception from deep down");
  ThrowFrom(depth - 1);
  asm volatile("");  // not a tail call: each level keeps its frame
}

void Crash(const std::string& how) {
  if (how == "segv") raise(SIGSEGV);
  if (how == "throw_deep") ThrowFrom(100);
  if (how == "abort") std::abort();
  if (how == "throw") throw std::runtime_error("faulty app: an exception nobody catches");
  if (how == "exit") std::exit(3);
  if (how == "hang") {
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  if (how == "spin") {
    volatile uint64_t x = 0;
    for (;;) x = x + 1;
  }
  if (how == "alloc") {
    std::vector<std::vector<char>> hog;
    for (;;) hog.emplace_back(64 << 20, 'x');
  }
}

class FaultyTask final : public aiac::app::Task {
 public:
  FaultyTask(std::unique_ptr<aiac::app::Task> inner, Fault fault, bool armed)
      : inner_(std::move(inner)), fault_(std::move(fault)), armed_(armed) {}
  std::vector<uint32_t> Dependencies() const override { return inner_->Dependencies(); }
  aiac::Status Absorb(uint32_t from, std::string_view bytes) override {
    return inner_->Absorb(from, bytes);
  }
  aiac::Result<bool> Iterate() override {
    if (armed_ && done_ + 1 >= fault_.at) Strike();
    auto did = inner_->Iterate();
    if (did.ok() && *did) {
      ++done_;
      if (fault_.pace > 0) std::this_thread::sleep_for(std::chrono::duration<double>(fault_.pace));
    }
    return did;
  }
  std::vector<aiac::app::Outgoing> TakeOutgoing() override { return inner_->TakeOutgoing(); }
  double LocalChange() const override { return inner_->LocalChange(); }
  bool LocallyConverged() const override { return inner_->LocallyConverged(); }
  void InputsFinal(bool final) override { inner_->InputsFinal(final); }
  std::string SaveState() const override { return inner_->SaveState(); }
  aiac::Status RestoreState(std::string_view state) override { return inner_->RestoreState(state); }
  std::string ResultSlice() const override { return inner_->ResultSlice(); }
  aiac::Status Tighten(double factor) override { return inner_->Tighten(factor); }

 private:
  std::unique_ptr<aiac::app::Task> inner_;
  Fault fault_;
  bool armed_;
  uint64_t done_ = 0;  // iterations that computed, on this daemon

  // The fault, its iteration come. Returns only when the task goes on: `slow` slept, or the
  // marker file of `crash_once` says the fault struck already.
  void Strike() {
    if (!fault_.once.empty()) {
      if (std::filesystem::exists(fault_.once)) {
        armed_ = false;
        return;
      }
      std::ofstream(fault_.once) << "crashed\n";
    }
    std::fprintf(stderr, "faulty app: %s in task %u now\n", fault_.how.c_str(), fault_.task);
    std::fflush(stderr);
    if (fault_.how == "slow") {
      armed_ = false;
      std::this_thread::sleep_for(std::chrono::duration<double>(fault_.seconds));
      return;
    }
    Crash(fault_.how);
  }
};

class FaultyApp final : public aiac::app::App {
 public:
  std::string_view name() const override { return "faulty"; }
  aiac::Result<aiac::app::JobPlan> Prepare(const aiac::app::JobParams& params) override {
    return cg_.Prepare(Without(params, nullptr));
  }
  aiac::Result<std::unique_ptr<aiac::app::Task>> MakeTask(const aiac::app::JobParams& params,
                                                          uint32_t task,
                                                          std::string_view slice) override {
    Fault fault;
    auto inner = cg_.MakeTask(Without(params, &fault), task, slice);
    if (!inner.ok()) return inner.status();
    const bool armed = fault.how != "none" && task == fault.task;
    if (armed && fault.at == 0 && !(fault.once.size() && std::filesystem::exists(fault.once))) {
      if (!fault.once.empty()) std::ofstream(fault.once) << "crashed\n";
      if (fault.how == "slow") {
        std::this_thread::sleep_for(std::chrono::duration<double>(fault.seconds));
      } else {
        Crash(fault.how);
      }
    }
    return std::unique_ptr<aiac::app::Task>(
        std::make_unique<FaultyTask>(std::move(*inner), std::move(fault), armed));
  }
  aiac::Result<aiac::app::GatherReport> Gather(const aiac::app::JobParams& params,
                                               const std::vector<std::string>& slices) override {
    return cg_.Gather(Without(params, nullptr), slices);
  }

 private:
  aiac::cg::CgApp cg_;
};

}  // namespace

AIAC_DEFINE_APP(FaultyApp)
