#include "spawner/job_runner.h"

#include <unistd.h>

#include <algorithm>

#include "net/hmac.h"

namespace aiac::spawner {

namespace asio = net::asio;
using net::awaitable;
using Clock = std::chrono::steady_clock;

namespace {

std::string RandomSuffix() {
  static const char kHex[] = "0123456789abcdef";
  std::string s;
  for (uint8_t b : net::RandomBytes(3)) {
    s += kHex[b >> 4];
    s += kHex[b & 15];
  }
  return s;
}

}  // namespace

JobRunner::JobRunner(JobSpec job, const AppDriver& app, SpawnerOptions options, Logger log)
    : job_(std::move(job)), app_(app), options_(std::move(options)), log_(std::move(log)) {
  summary_.job = job_.name;
  summary_.job_id = job_.name + "-" + RandomSuffix();
  summary_.app = job_.app;
  summary_.tasks = job_.tasks;
  spawner_id_ = "spawner-" + std::to_string(getpid());
}

void JobRunner::Abort(const std::string& why) {
  if (aborted_) return;
  aborted_ = true;
  failure_ = why;
  if (wake_) Wake();
}

void JobRunner::Fail(const std::string& why) {
  if (failure_.empty()) failure_ = why;
  Wake();
}

awaitable<RunSummary> JobRunner::Run(Endpoint supernode) {
  auto executor = co_await asio::this_coro::executor;
  wake_ = std::make_unique<asio::steady_timer>(executor);
  start_ = Clock::now();
  deadline_ = start_ + std::chrono::milliseconds(static_cast<int64_t>(job_.timeout_s * 1000));
  auto finish = [&](std::string status, std::string error) {
    summary_.status = std::move(status);
    summary_.error = std::move(error);
    summary_.wall_seconds = std::chrono::duration<double>(Clock::now() - start_).count();
    summary_.per_task.clear();
    for (const auto& s : slots_) summary_.per_task.push_back(s.outcome);
    return summary_;
  };

  net::RetryPolicy retry;
  retry.attempts = 20;
  auto sn = co_await net::Dial(supernode, options_.net, proto::Role::SPAWNER, spawner_id_, retry);
  if (!sn.ok()) co_return finish("failed", "super-node " + supernode.ToString() + ": " + sn.status().message());
  Status acquired = co_await AcquireDaemons(**sn);
  if (!acquired.ok()) co_return finish(aborted_ ? "aborted" : "failed", acquired.message());

  // Default mapping (DESIGN.md section 4): task i on the i-th daemon in the order granted.
  for (size_t i = 0; i < slots_.size(); ++i) asio::co_spawn(executor, WatchDaemon(i), asio::detached);
  Status ready = co_await WaitUntil(
      [&] { return std::all_of(slots_.begin(), slots_.end(), [](const Slot& s) { return s.ready; }); },
      "assigning");
  if (ready.ok()) {
    log_->info("job {}: {} tasks assigned, starting", summary_.job_id, slots_.size());
    for (auto& s : slots_) {
      s.conn->SendEnvelope([&](proto::Envelope::Builder e) { e.initStartTask().setJob(summary_.job_id); });
    }
    ready = co_await WaitUntil(
        [&] { return std::all_of(slots_.begin(), slots_.end(), [](const Slot& s) { return s.outcome.finished; }); },
        "running");
  }

  // Whatever happened: halt the tasks and give every daemon back.
  for (auto& s : slots_) {
    if (s.conn) s.conn->SendEnvelope([&](proto::Envelope::Builder e) { e.initHalt().setJob(summary_.job_id); });
  }
  (*sn)->SendEnvelope([&](proto::Envelope::Builder e) {
    auto r = e.initReleaseDaemons();
    r.setJob(summary_.job_id);
    auto ids = r.initDaemonIds(static_cast<unsigned>(granted_.size()));
    for (size_t i = 0; i < granted_.size(); ++i) ids.set(static_cast<unsigned>(i), granted_[i]);
  });
  // Let the halts and the release reach the wire before the connections go.
  asio::steady_timer flush(executor, std::chrono::milliseconds(50));
  co_await flush.async_wait(net::use_nothrow);
  for (auto& s : slots_) if (s.conn) s.conn->Close();
  (*sn)->Close();

  if (!ready.ok()) co_return finish(aborted_ ? "aborted" : "failed", ready.message());
  std::vector<TaskOutcome> outcomes;
  for (const auto& s : slots_) outcomes.push_back(s.outcome);
  Status checked = app_.Check(job_, outcomes, summary_.result);
  if (!checked.ok()) co_return finish("failed", checked.message());
  co_return finish("succeeded", "");
}

awaitable<Status> JobRunner::AcquireDaemons(net::Connection& sn) {
  const auto wait_until = Clock::now() + std::chrono::milliseconds(options_.wait_daemons_ms);
  uint64_t request_id = 0;
  std::string last_error;
  asio::steady_timer pause(co_await asio::this_coro::executor);
  while (!aborted_) {
    ++request_id;
    sn.SendEnvelope([&](proto::Envelope::Builder e) {
      auto r = e.initRequestDaemons();
      r.setRequestId(request_id);
      r.setJob(summary_.job_id);
      r.setCount(job_.tasks);
      r.setSpares(static_cast<uint32_t>(options_.spares));
    });
    auto msg = co_await sn.Receive();
    if (!msg.ok()) co_return Unavailable("super-node: " + msg.status().message());
    auto env = (*msg)->root();
    if (!env.isGrantDaemons()) co_return ProtocolError("super-node answered a request with another message");
    auto grant = env.getGrantDaemons();
    if (grant.getError().size() == 0) {
      auto list = grant.getDaemons();
      if (list.size() < job_.tasks) co_return ProtocolError("super-node granted too few daemons");
      for (auto d : list) granted_.emplace_back(d.getId().cStr());
      slots_.resize(job_.tasks);
      for (uint32_t i = 0; i < job_.tasks; ++i) {
        slots_[i].outcome.task = i;
        slots_[i].outcome.daemon = list[i].getId().cStr();
        slots_[i].outcome.address = list[i].getAddress().cStr();
      }
      summary_.daemons = static_cast<uint32_t>(list.size());
      log_->info("job {}: granted {} daemons by {}", summary_.job_id, list.size(), sn.Describe());
      co_return Status::Ok();
    }
    std::string error = grant.getError().cStr();
    if (Clock::now() > wait_until) {
      co_return ResourceExhausted("not enough daemons after " +
                                  std::to_string(options_.wait_daemons_ms) + " ms: " + error);
    }
    if (error != last_error) log_->info("waiting for daemons: {}", error);
    last_error = error;
    pause.expires_after(std::chrono::milliseconds(200));
    co_await pause.async_wait(net::use_nothrow);
  }
  co_return Aborted(failure_);
}

awaitable<void> JobRunner::WatchDaemon(size_t index) {
  Slot& slot = slots_[index];
  auto at = ParseEndpoint(slot.outcome.address);
  if (!at.ok()) {
    Fail("daemon " + slot.outcome.daemon + ": " + at.status().message());
    co_return;
  }
  net::RetryPolicy retry;
  retry.attempts = 5;
  auto conn = co_await net::Dial(*at, options_.net, proto::Role::SPAWNER, spawner_id_, retry);
  if (!conn.ok()) {
    Fail("daemon " + slot.outcome.daemon + " (task " + std::to_string(index) + "): " + conn.status().message());
    co_return;
  }
  slot.conn = *conn;
  const auto neighbours = app_.Neighbours(static_cast<uint32_t>(index), job_.tasks);
  slot.conn->SendEnvelope([&](proto::Envelope::Builder e) {
    auto a = e.initAssignTask();
    a.setJob(summary_.job_id);
    a.setTask(static_cast<uint32_t>(index));
    a.setTaskCount(job_.tasks);
    a.setApp(job_.app);
    auto params = a.initParams(static_cast<unsigned>(job_.params.size()));
    unsigned p = 0;
    for (const auto& [k, v] : job_.params) {
      params[p].setKey(k);
      params[p].setValue(v);
      ++p;
    }
    auto ns = a.initNeighbours(static_cast<unsigned>(neighbours.size()));
    for (size_t n = 0; n < neighbours.size(); ++n) {
      ns[n].setTask(neighbours[n]);
      ns[n].setAddress(slots_[neighbours[n]].outcome.address);
    }
  });
  for (;;) {
    auto msg = co_await slot.conn->Receive();
    if (!msg.ok()) {
      if (!slot.outcome.finished && failure_.empty()) {
        slot.lost = true;
        Fail("daemon " + slot.outcome.daemon + " (task " + std::to_string(index) +
             ") lost: " + msg.status().message());
      }
      co_return;
    }
    auto env = (*msg)->root();
    if (env.isTaskReady()) {
      auto r = env.getTaskReady();
      if (r.getError().size() > 0) {
        Fail("daemon " + slot.outcome.daemon + " refused task " + std::to_string(index) + ": " +
             r.getError().cStr());
      } else {
        slot.ready = true;
        Wake();
      }
    } else if (env.isTaskProgress()) {
      slot.outcome.iterations = std::max(slot.outcome.iterations, env.getTaskProgress().getIteration());
    } else if (env.isResult()) {
      auto r = env.getResult();
      if (r.getError().size() > 0) {
        Fail("task " + std::to_string(index) + " failed: " + r.getError().cStr());
      } else {
        slot.outcome.iterations = r.getIterations();
        auto data = r.getData();
        slot.outcome.data.assign(reinterpret_cast<const char*>(data.begin()), data.size());
        slot.outcome.finished = true;
        Wake();
      }
    }
  }
}

awaitable<Status> JobRunner::WaitUntil(const std::function<bool()>& done, const char* phase) {
  auto next_progress = Clock::now() + std::chrono::milliseconds(options_.progress_ms);
  for (;;) {
    if (!failure_.empty()) co_return aborted_ ? Aborted(failure_) : Unavailable(failure_);
    if (done()) co_return Status::Ok();
    const auto now = Clock::now();
    if (now > deadline_) {
      co_return Timeout(std::string("job timed out while ") + phase + " (timeout_s = " +
                        std::to_string(job_.timeout_s) + ")");
    }
    if (now >= next_progress) {
      PrintProgress();
      if (health_) {
        if (std::string casualty = health_(); !casualty.empty()) Fail(casualty);
      }
      next_progress = now + std::chrono::milliseconds(options_.progress_ms);
    }
    wake_->expires_at(std::min(next_progress, deadline_));
    co_await wake_->async_wait(net::use_nothrow);
  }
}

void JobRunner::PrintProgress() {
  uint64_t lo = UINT64_MAX, hi = 0;
  size_t finished = 0, live = 0;
  for (const auto& s : slots_) {
    lo = std::min(lo, s.outcome.iterations);
    hi = std::max(hi, s.outcome.iterations);
    finished += s.outcome.finished;
    live += s.conn && s.conn->is_open();
  }
  if (slots_.empty()) lo = 0;
  const double t = std::chrono::duration<double>(Clock::now() - start_).count();
  log_->info("[{:6.1f}s] job {}: iterations {}..{}, tasks finished {}/{}, live daemons {}/{}, failures {}",
             t, summary_.job_id, lo, hi, finished, slots_.size(), live, slots_.size(),
             std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) { return s.lost; }));
}

}  // namespace aiac::spawner
