// ChildTask: an app's task in a child process (aiac-app-child, the real binary), driven through
// app::Task; ChildRunner: the task's runner in that child. The faulty test plugin is the cg app
// with crashes on demand (tests/plugins).
#include "daemon/app_child.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

#include "app/local_run.h"
#include "apps/cg/cg_app.h"
#include "daemon/app_child_runner.h"
#include "support/test_support.h"

namespace aiac::daemon {
namespace {

using aiac::testing::BinPath;
using aiac::testing::TempDir;

// The lines an app wrote, kept.
class KeptLog final : public app::Log {
 public:
  void Write(app::LogLevel, std::string_view line) const override {
    std::lock_guard lock(mu_);
    lines.emplace_back(line);
  }
  mutable std::vector<std::string> lines;

 private:
  mutable std::mutex mu_;
};

std::map<std::string, std::string> CgParams() {
  return {{"n", "2000"}, {"bandwidth", "5"}, {"seed", "3"}, {"tolerance", "1e-10"}};
}

// A cg job of `tasks` tasks on the system of CgParams: its params and its plan (the tasks' slices).
struct CgJob {
  app::JobParams params;
  std::vector<std::string> slices;
};
CgJob PlanCg(uint32_t tasks) {
  CgJob job;
  job.params.values = CgParams();
  job.params.tasks = tasks;
  auto plan = cg::CgApp().Prepare(job.params);
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  if (plan.ok()) job.slices = plan->slices;
  job.slices.resize(tasks);
  return job;
}

// The cg app whose tasks run in child processes (the faulty plugin, told to do nothing wrong
// unless `fault` says otherwise); Prepare and Gather stay in this process.
class ChildCgApp final : public app::App {
 public:
  ChildCgApp(const TempDir& dir, std::map<std::string, std::string> fault = {})
      : dir_(dir), fault_(std::move(fault)) {}
  std::string_view name() const override { return "faulty"; }
  Result<app::JobPlan> Prepare(const app::JobParams& params) override {
    return cg_.Prepare(params);
  }
  Result<std::unique_ptr<app::Task>> MakeTask(const app::JobParams& params, uint32_t task,
                                              std::string_view slice) override {
    app::JobParams p = params;
    for (const auto& [k, v] : fault_) p.values[k] = v;
    AppChildSpec spec = Spec(dir_, "task" + std::to_string(task) + "." + std::to_string(++made_));
    spec.log = log;
    AIAC_ASSIGN_OR_RETURN(auto child, ChildTask::Start(spec, "faulty", p, task, slice));
    return std::unique_ptr<app::Task>(std::move(child));
  }
  Result<app::GatherReport> Gather(const app::JobParams& params,
                                   const std::vector<std::string>& slices) override {
    return cg_.Gather(params, slices);
  }

  static AppChildSpec Spec(const TempDir& dir, const std::string& name) {
    AppChildSpec spec;
    spec.executable = BinPath("aiac-app-child");
    spec.plugin = AIAC_FAULTY_PLUGIN;
    spec.stderr_path = dir / (name + ".stderr");
    spec.stall = std::chrono::seconds(60);  // a generous bound: nothing here hangs unless asked
    return spec;
  }

  std::shared_ptr<KeptLog> log = std::make_shared<KeptLog>();

 private:
  const TempDir& dir_;
  std::map<std::string, std::string> fault_;
  cg::CgApp cg_;
  int made_ = 0;
};

app::LocalRunOptions RunOptions(uint64_t seed) {
  app::LocalRunOptions o;
  o.tasks = 3;
  o.params = CgParams();
  o.seed = seed;
  o.restore_every = 7;  // SaveState, MakeTask, RestoreState, Tighten through the child too
  o.log = [](app::LogLevel, std::string_view) {};
  return o;
}

TEST(AppChildTest, ATaskInAChildProcessComputesExactlyWhatItComputesInProcess) {
  TempDir dir;
  cg::CgApp here;
  ChildCgApp there(dir);
  auto a = app::RunLocally(here, RunOptions(5));
  auto b = app::RunLocally(there, RunOptions(5));
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(b->report.status, app::GatherStatus::kConverged) << b->report.error;
  // Same seed, same calls, same bytes: the same run, to the last iteration and bit.
  EXPECT_EQ(b->iterations, a->iterations);
  EXPECT_EQ(b->report.residual, a->report.residual);
  EXPECT_GT(b->restores, 0u);
}

// Builds task 0 of a 2-task cg job in a child that does `how` at its 2nd iteration.
std::unique_ptr<ChildTask> Faulty(const TempDir& dir, const std::string& how,
                                  AppChildSpec spec_changes(AppChildSpec) = nullptr) {
  auto [params, slices] = PlanCg(2);
  params.values["crash_how"] = how;
  params.values["crash_at"] = "2";
  params.values["crash_task"] = "0";
  AppChildSpec spec = ChildCgApp::Spec(dir, how);
  if (spec_changes) spec = spec_changes(spec);
  auto task = ChildTask::Start(spec, "faulty", params, 0, slices[0]);
  EXPECT_TRUE(task.ok()) << task.status().message() << "\n" << TailOfFile(spec.stderr_path);
  return task.ok() ? std::move(*task) : nullptr;
}

// Iterates until the task fails; its crash.
AppCrash CrashOf(ChildTask& task) {
  for (int i = 0; i < 10; ++i) {
    auto did = task.Iterate();
    if (!did.ok()) {
      EXPECT_EQ(did.status().code(), StatusCode::kAborted);
      EXPECT_NE(did.status().message().find("app crashed"), std::string::npos);
      break;
    }
  }
  auto crash = task.state()->crash();
  EXPECT_TRUE(crash.has_value());
  EXPECT_FALSE(task.state()->health().ok());
  // Dead for good: every later call fails, and those without a status return nothing.
  EXPECT_FALSE(task.Iterate().ok());
  EXPECT_EQ(task.SaveState(), "");
  EXPECT_FALSE(task.Absorb(1, "x").ok());
  return crash.value_or(AppCrash{});
}

// The environment of a running process, one VAR=VALUE each.
std::vector<std::string> EnvironmentOf(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  std::vector<std::string> vars;
  for (std::string var; std::getline(in, var, '\0');) vars.push_back(var);
  return vars;
}

// A task's libraries get OpenMP's thread limit from the spec, whatever the daemon's own
// environment says; 0 leaves the daemon's environment as it is.
TEST(AppChildTest, TheChildGetsTheThreadLimitOfItsSpec) {
  TempDir dir;
  ::setenv("OMP_THREAD_LIMIT", "7", 1);
  auto limited = Faulty(dir, "none", [](AppChildSpec s) {
    s.threads = 3;
    return s;
  });
  auto inherited = Faulty(dir, "none", [](AppChildSpec s) {
    s.threads = 0;
    return s;
  });
  ::unsetenv("OMP_THREAD_LIMIT");
  ASSERT_TRUE(limited && inherited);
  auto limits = [](pid_t pid) {
    std::vector<std::string> found;
    for (const auto& var : EnvironmentOf(pid))
      if (var.starts_with("OMP_THREAD_LIMIT=")) found.push_back(var);
    return found;
  };
  EXPECT_EQ(limits(limited->pid()), std::vector<std::string>{"OMP_THREAD_LIMIT=3"});
  EXPECT_EQ(limits(inherited->pid()), std::vector<std::string>{"OMP_THREAD_LIMIT=7"});
  EXPECT_EQ(AppChildSpec{}.threads, 1);  // the default: one thread per task
}

TEST(AppChildTest, ASegfaultIsReportedWithItsSignalAndABacktrace) {
  TempDir dir;
  auto task = Faulty(dir, "segv");
  ASSERT_TRUE(task);
  const AppCrash crash = CrashOf(*task);
  EXPECT_EQ(crash.cause, "SIGSEGV");
  EXPECT_NE(crash.stderr_tail.find("faulty app: segv in task 0 now"), std::string::npos)
      << crash.stderr_tail;
  EXPECT_NE(crash.stderr_tail.find("caught SIGSEGV; backtrace:"), std::string::npos)
      << crash.stderr_tail;
}

TEST(AppChildTest, AbortsEscapingExceptionsAndExitsAreCrashesToo) {
  TempDir dir;
  auto aborted = Faulty(dir, "abort");
  ASSERT_TRUE(aborted);
  EXPECT_EQ(CrashOf(*aborted).cause, "SIGABRT");
  auto thrown = Faulty(dir, "throw");
  ASSERT_TRUE(thrown);
  const AppCrash t = CrashOf(*thrown);
  EXPECT_EQ(t.cause, "SIGABRT");
  EXPECT_NE(t.stderr_tail.find("an exception nobody catches"), std::string::npos) << t.stderr_tail;
  // However deep the stack, the backtrace leaves the exception's words in the tail.
  auto deep = Faulty(dir, "throw_deep");
  ASSERT_TRUE(deep);
  const AppCrash d = CrashOf(*deep);
  EXPECT_EQ(d.cause, "SIGABRT");
  EXPECT_NE(d.stderr_tail.find("an exception from deep down"), std::string::npos) << d.stderr_tail;
  EXPECT_NE(d.stderr_tail.find("caught SIGABRT; backtrace:"), std::string::npos) << d.stderr_tail;
  auto exited = Faulty(dir, "exit");
  ASSERT_TRUE(exited);
  EXPECT_EQ(CrashOf(*exited).cause, "exit code 3");
}

TEST(AppChildTest, AHungAppIsKilledAfterTheStallLimit) {
  TempDir dir;
  auto task = Faulty(dir, "hang", [](AppChildSpec s) {
    s.stall = std::chrono::milliseconds(300);
    return s;
  });
  ASSERT_TRUE(task);
  const pid_t pid = task->pid();
  const AppCrash crash = CrashOf(*task);
  EXPECT_EQ(crash.cause, "hung (no answer in 0.3 s)");
  EXPECT_NE(::kill(pid, 0), 0);  // reaped: no such process any more
}

TEST(AppChildTest, TheCpuLimitEndsAnAppThatComputesForEver) {
  TempDir dir;
  auto task = Faulty(dir, "spin", [](AppChildSpec s) {
    s.cpu_seconds = 1;
    return s;
  });
  ASSERT_TRUE(task);
  EXPECT_EQ(CrashOf(*task).cause, "SIGXCPU (cpu_seconds = 1)");
}

#if !defined(AIAC_SANITIZE)
TEST(AppChildTest, TheMemoryLimitEndsAnAppThatAllocatesWithoutEnd) {
  TempDir dir;
  auto task = Faulty(dir, "alloc", [](AppChildSpec s) {
    s.memory_mb = 512;
    return s;
  });
  ASSERT_TRUE(task);
  const AppCrash crash = CrashOf(*task);
  EXPECT_EQ(crash.cause, "SIGABRT");
  EXPECT_NE(crash.stderr_tail.find("bad_alloc"), std::string::npos) << crash.stderr_tail;
}
#endif

TEST(AppChildTest, AKilledChildIsACrashAndTheAppsLogLinesComeThrough) {
  TempDir dir;
  ChildCgApp app(dir);
  auto [params, slices] = PlanCg(2);
  auto made = app.MakeTask(params, 1, slices[1]);
  ASSERT_TRUE(made.ok()) << made.status().message();
  // The app's line, written in the child while it built the task, came back through the socket.
  ASSERT_FALSE(app.log->lines.empty());
  EXPECT_NE(app.log->lines[0].find("cg: block of task 1 built"), std::string::npos);
  auto& task = static_cast<ChildTask&>(**made);
  ASSERT_TRUE(task.Iterate().ok());
  ASSERT_EQ(::kill(task.pid(), SIGSEGV), 0);  // as an operator (or a hidden check) would
  const AppCrash crash = CrashOf(task);
  EXPECT_EQ(crash.cause, "SIGSEGV");
}

TEST(AppChildTest, AMissingPluginOrWrongAppIsAnErrorNotACrash) {
  TempDir dir;
  auto [params, slices] = PlanCg(1);
  auto wrong = ChildTask::Start(ChildCgApp::Spec(dir, "wrong"), "cg", params, 0, slices[0]);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("holds app 'faulty', not 'cg'"), std::string::npos)
      << wrong.status().message();
  AppChildSpec missing = ChildCgApp::Spec(dir, "missing");
  missing.plugin = dir / "no-such.so";
  auto none = ChildTask::Start(missing, "faulty", params, 0, slices[0]);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("cannot load plugin"), std::string::npos)
      << none.status().message();
  AppChildSpec no_program = ChildCgApp::Spec(dir, "no-program");
  no_program.executable = dir / "no-such-program";
  auto absent = ChildTask::Start(no_program, "faulty", params, 0, slices[0]);
  ASSERT_FALSE(absent.ok());
}

}  // namespace
}  // namespace aiac::daemon

namespace aiac::daemon {
namespace {

// The daemon's io thread, where a ChildRunner reads and writes; stopped and joined last.
struct IoThread {
  net::asio::io_context io;
  net::asio::executor_work_guard<net::asio::io_context::executor_type> work =
      net::asio::make_work_guard(io);
  std::thread thread{[this] { io.run(); }};
  ~IoThread() {
    work.reset();  // what the runners posted as they ended runs first
    thread.join();
  }
};

// What a runner's callbacks received, waited for by the test thread.
struct Events {
  std::mutex mu;
  std::condition_variable changed;
  std::optional<Result<std::string>> finished;
  uint64_t iterations = 0;
  uint64_t checkpoints = 0;
  uint64_t progress = 0;
  runtime::TaskMeasures measures;  // the last progress report's
  bool converged = false;
  std::optional<std::string> snapshot;

  runtime::RunnerCallbacks Callbacks() {
    runtime::RunnerCallbacks cb;
    auto note = [this](auto fn) {
      {
        std::lock_guard lock(mu);
        fn();
      }
      changed.notify_all();
    };
    cb.send = [](std::vector<runtime::OutgoingValue>, uint64_t, bool) {};
    cb.local_convergence = [this, note](bool now, uint64_t) { note([&] { converged = now; }); };
    cb.progress = [this, note](uint64_t, double, bool, const runtime::TaskMeasures& m) {
      note([&] {
        ++progress;
        measures = m;
      });
    };
    cb.answer = [](uint64_t, bool) {};
    cb.snapshot = [this, note](uint64_t, std::string slice, uint64_t) {
      note([&] { snapshot = std::move(slice); });
    };
    cb.checkpoint = [this, note](std::string, uint64_t) { note([&] { ++checkpoints; }); };
    cb.finished = [this, note](Result<std::string> slice, uint64_t n) {
      note([&] {
        finished = std::move(slice);
        iterations = n;
      });
    };
    return cb;
  }
  // Waits (a generous bound) until `done` holds under the lock.
  bool Wait(const std::function<bool()>& done) {
    std::unique_lock lock(mu);
    return changed.wait_for(lock, std::chrono::seconds(120), done);
  }
};

// Task 0 of a one-task cg job (it depends on nothing: the same iterations every run), in a child
// built with the faulty plugin's `fault` params.
std::unique_ptr<ChildTask> LoneTask(const TempDir& dir, const std::string& name,
                                    std::map<std::string, std::string> fault = {},
                                    std::chrono::milliseconds stall = std::chrono::seconds(60)) {
  auto [params, slices] = PlanCg(1);
  for (auto& [k, v] : fault) params.values[k] = v;
  AppChildSpec spec = ChildCgApp::Spec(dir, name);
  spec.stall = stall;
  auto task = ChildTask::Start(spec, "faulty", params, 0, slices[0]);
  EXPECT_TRUE(task.ok()) << task.status().message();
  return task.ok() ? std::move(*task) : nullptr;
}

// Asynchronous: a lone task iterates until its block converged, then waits, computing nothing.
runtime::RunnerOptions LoneOptions() {
  runtime::RunnerOptions o;
  o.checkpoint_every = 1;
  o.progress_period = std::chrono::milliseconds(20);
  return o;
}

TEST(ChildRunnerTest, RunsTheTaskInItsChildToTheResultARunnerHereGives) {
  TempDir dir;
  // Here: the same task built in this process, run by a TaskRunner.
  auto [params, slices] = PlanCg(1);
  auto local = cg::CgApp().MakeTask(params, 0, slices[0]);
  ASSERT_TRUE(local.ok());
  Events here;
  runtime::TaskRunner runner(std::move(*local), {}, LoneOptions(), here.Callbacks());
  runner.Start();
  ASSERT_TRUE(here.Wait([&] { return here.converged; }));
  runner.Halt();
  ASSERT_TRUE(here.Wait([&] { return here.finished.has_value(); }));
  runner.Join();

  Events there;
  IoThread io;
  auto child = ChildRunner::Run(io.io, LoneTask(dir, "lone"), LoneOptions(), there.Callbacks());
  ASSERT_TRUE(child.ok()) << child.status().message();
  (*child)->Snapshot(1);
  (*child)->Start();
  ASSERT_TRUE(there.Wait([&] { return there.converged; }));
  (*child)->Halt();
  ASSERT_TRUE(there.Wait([&] { return there.finished.has_value(); }));
  ASSERT_TRUE(there.finished->ok()) << there.finished->status().message();
  ASSERT_TRUE(here.finished->ok());
  EXPECT_EQ(**there.finished, **here.finished);  // the same solution, bit for bit
  EXPECT_EQ(there.iterations, here.iterations);
  EXPECT_EQ(there.checkpoints, here.checkpoints);
  EXPECT_GT(there.checkpoints, 0u);
  EXPECT_TRUE(there.snapshot.has_value());
  // The measures cross too, the time the task had something to do among them.
  EXPECT_GT(there.measures.profile.compute_s, 0);
  EXPECT_GE(there.measures.active_s, there.measures.profile.compute_s);
}

TEST(ChildRunnerTest, AChildThatDiesMidRunFinishesTheTaskWithItsCrash) {
  TempDir dir;
  Events events;
  IoThread io;
  auto task =
      LoneTask(dir, "dies", {{"crash_how", "segv"}, {"crash_at", "2"}, {"crash_task", "0"}});
  ASSERT_TRUE(task);
  auto state = task->state();
  auto child = ChildRunner::Run(io.io, std::move(task), LoneOptions(), events.Callbacks());
  ASSERT_TRUE(child.ok());
  (*child)->Start();
  ASSERT_TRUE(events.Wait([&] { return events.finished.has_value(); }));
  ASSERT_FALSE(events.finished->ok());
  EXPECT_EQ(events.finished->status().message(), "app crashed: SIGSEGV");
  ASSERT_TRUE(state->crash());
  EXPECT_NE(state->crash()->stderr_tail.find("caught SIGSEGV"), std::string::npos);
}

// Hung in its first iteration: no event at all after Start.
TEST(ChildRunnerTest, ARunningAppThatStopsReportingIsKilledAsHung) {
  TempDir dir;
  Events events;
  IoThread io;
  auto task =
      LoneTask(dir, "hangs", {{"crash_how", "hang"}, {"crash_at", "1"}, {"crash_task", "0"}},
               std::chrono::milliseconds(500));
  ASSERT_TRUE(task);
  const pid_t pid = task->pid();
  auto child = ChildRunner::Run(io.io, std::move(task), LoneOptions(), events.Callbacks());
  ASSERT_TRUE(child.ok());
  (*child)->Start();
  ASSERT_TRUE(events.Wait([&] { return events.finished.has_value(); }));
  ASSERT_FALSE(events.finished->ok());
  EXPECT_EQ(events.finished->status().message(), "app crashed: hung (no progress in 0.5 s)");
  EXPECT_NE(::kill(pid, 0), 0);
}

// Commands wait in the runner's queue while the child does not read (stopped here): the io
// thread, which a daemon's network shares, goes on.
TEST(ChildRunnerTest, AChildThatDoesNotReadNeverHoldsTheIoThreadUp) {
  TempDir dir;
  Events events;
  IoThread io;
  auto task = LoneTask(dir, "stopped");
  ASSERT_TRUE(task);
  const pid_t pid = task->pid();
  auto child = ChildRunner::Run(io.io, std::move(task), LoneOptions(), events.Callbacks());
  ASSERT_TRUE(child.ok());
  (*child)->Start();
  ASSERT_TRUE(events.Wait([&] { return events.converged; }));
  ASSERT_EQ(::kill(pid, SIGSTOP), 0);
  // Far more than a socket buffer holds, from senders whose values do not replace each other.
  for (uint32_t from = 100; from < 164; ++from) {
    (*child)->Put(from, 1, std::string(1 << 20, 'x'), false, 0, 1, 1);
  }
  std::promise<void> turned;
  net::asio::post(io.io, [&] { turned.set_value(); });
  EXPECT_EQ(turned.get_future().wait_for(std::chrono::seconds(60)), std::future_status::ready);
  ::kill(pid, SIGCONT);
  (*child)->Halt();
  ASSERT_TRUE(events.Wait([&] { return events.finished.has_value(); }));
  EXPECT_TRUE(events.finished->ok()) << events.finished->status().message();
}

TEST(ChildRunnerTest, ACrashWhileTheTaskIsBuiltIsReportedAsACrash) {
  TempDir dir;
  auto [params, slices] = PlanCg(1);
  params.values.insert({{"crash_how", "abort"}, {"crash_at", "0"}, {"crash_task", "0"}});
  std::optional<AppCrash> crash;
  auto task =
      ChildTask::Start(ChildCgApp::Spec(dir, "make"), "faulty", params, 0, slices[0], &crash);
  ASSERT_FALSE(task.ok());
  EXPECT_EQ(task.status().message(), "app crashed: SIGABRT");
  ASSERT_TRUE(crash);
  EXPECT_EQ(crash->cause, "SIGABRT");
}

}  // namespace
}  // namespace aiac::daemon
