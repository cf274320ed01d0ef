// Every service's Stop() completes only once its coroutines and threads have ended, so the
// service can be destroyed right after it while the rest of the platform goes on. The platform
// runs in this process, as the binaries wire it (a super-node, daemons with their super-node
// links and RocksDB checkpoint stores, the spawner's job runner) on one io_context over
// loopback: daemons are stopped while their task iterates and checkpoints flow to and from them,
// and destroyed at once. Under AddressSanitizer (conf/sanitize.sh) a coroutine or thread that
// outlived its daemon would be a use after free; here too the loop must end by itself once
// everything stopped, which it cannot while any coroutine still waits.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <vector>

#include "checkpoint/rocksdb_checkpoint_store.h"
#include "daemon/supernode_link.h"
#include "daemon/task_host.h"
#include "net/tls.h"
#include "spawner/app_loader.h"
#include "spawner/job_runner.h"
#include "supernode/supernode_service.h"
#include "support/identities.h"
#include "support/test_support.h"

namespace aiac {
namespace {

namespace asio = net::asio;
using namespace std::chrono_literals;

// One daemon as aiac-daemon wires it: its task host and its link to the super-node.
struct Daemon {
  std::unique_ptr<daemon::TaskHost> host;
  std::unique_ptr<daemon::SupernodeLink> link;
};

class StopTest : public ::testing::Test {
 protected:
  StopTest() : log_(MakeLogger("stop", spdlog::level::warn)) {
    net_.cluster_key = "stop-test-cluster-key-0123456789";
    net_.tls = *net::TlsContext::Make(net_.cluster_key);
  }

  Endpoint StartSupernode() {
    supernode::SupernodeOptions options;
    options.id = "sn1";
    options.net = Member("sn1", proto::Role::SUPERNODE);
    registry_.emplace(options.id, nullptr);
    supernode_ = std::make_unique<supernode::SupernodeService>(io_, options, *registry_, log_);
    return *supernode_->Start(Endpoint{"127.0.0.1", 0});
  }

  // `clocks`: the period of the task's progress reports and link probes.
  Daemon StartDaemon(const std::string& id, const Endpoint& supernode,
                     std::chrono::milliseconds clocks = 50ms) {
    // Unsigned plugins: this test is about stopping, not code signing.
    const net::NetOptions net = Member(id, proto::Role::DAEMON);
    daemon::TaskHostOptions options{id, net, clocks, dir_ / (id + "/plugins"), {{}, true, {}},
                                    {}, {},  {}};
    options.probe = clocks;
    options.app_child_executable = AIAC_BIN_DIR "/aiac-app-child";
    options.task_dir = dir_ / (id + "/tasks");
    auto store = checkpoint::RocksDbCheckpointStore::Open(dir_ / (id + "/checkpoints"));
    EXPECT_TRUE(store.ok()) << store.status().message();
    Daemon d;
    d.host = std::make_unique<daemon::TaskHost>(io_, options, std::move(*store), log_);
    auto bound = d.host->Listen(Endpoint{"127.0.0.1", 0});
    EXPECT_TRUE(bound.ok());
    d.host->set_id(id);
    d.host->Serve();
    daemon::TaskHost* host = d.host.get();
    d.link = std::make_unique<daemon::SupernodeLink>(
        io_.get_executor(), std::vector<Endpoint>{supernode},
        daemon::SelfDescription{id, bound->ToString(), "default", 1.0, 1}, net, 100ms, log_,
        [host] { return host->busy(); }, [](Status) {}, [](const net::RevocationList&) {});
    d.link->Start();
    return d;
  }

  // The network options of process `id` of this platform: the key, and its own identity.
  net::NetOptions Member(const std::string& id, proto::Role role) const {
    net::NetOptions o = net_;
    o.identity = authority_.Identity(id, role);
    return o;
  }

  // Runs the loop until `done` holds; false after `limit` (a generous bound, never expected).
  bool RunUntil(const std::function<bool()>& done, std::chrono::seconds limit = 120s) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      io_.run_one_for(50ms);
    }
    return true;
  }

  // Stops `d` (its super-node link, then its task host) on the loop; false after `limit`.
  bool StopDaemon(Daemon& d, std::chrono::seconds limit) {
    bool stopped = false;
    asio::co_spawn(
        io_,
        [&]() -> net::awaitable<void> {
          co_await d.link->Stop();
          co_await d.host->Stop();
          stopped = true;
        },
        asio::detached);
    return RunUntil([&] { return stopped; }, limit);
  }

  // Starts `runner`'s job on the loop with the super-node at `sn`; `summary` is set when it ends.
  void StartRun(spawner::JobRunner& runner, const Endpoint& sn,
                std::optional<spawner::RunSummary>& summary) {
    asio::co_spawn(
        io_,
        [&runner, &summary, sn]() -> net::awaitable<void> {
          // Named, not a temporary: g++ 12 mishandles temporaries across co_await.
          std::vector<Endpoint> supernodes = {sn};
          summary = co_await runner.Run(std::move(supernodes));
        },
        asio::detached);
  }

  bool StopSupernode() {
    bool stopped = false;
    asio::co_spawn(
        io_,
        [&]() -> net::awaitable<void> {
          co_await supernode_->Stop();
          stopped = true;
        },
        asio::detached);
    return RunUntil([&] { return stopped; }, 30s);
  }

  testing::TempDir dir_;
  testing::TestAuthority authority_;
  Logger log_;
  net::NetOptions net_;
  asio::io_context io_;
  std::optional<supernode::Registry> registry_;
  std::unique_ptr<supernode::SupernodeService> supernode_;
};

TEST_F(StopTest, DaemonsStoppedMidTaskAndMidCheckpointAreGoneForGood) {
  const Endpoint sn = StartSupernode();
  std::vector<Daemon> daemons;
  for (const char* id : {"d1", "d2", "d3", "d4"}) daemons.push_back(StartDaemon(id, sn));

  // A CG run long enough to be stopped under way, each task checkpointed to two others every
  // 20 ms (its state is its block of x: 60,000 rows, 480 KB a copy).
  testing::WriteFile(dir_ / "cg.toml",
                     "name = \"stop\"\napp = \"cg\"\ntasks = 3\ntimeout_s = 300\nbackups = 2\n"
                     "checkpoint_seconds = 0.02\n[params]\nn = 180000\nbandwidth = 12\nseed = 7\n"
                     "tolerance = 1e-12\ninner = \"cg\"\n");
  auto job = spawner::LoadJobSpec(dir_ / "cg.toml");
  ASSERT_TRUE(job.ok()) << job.status().message();
  auto app = spawner::LoadAndPrepare(*job, spawner::DefaultPluginDir());
  ASSERT_TRUE(app.ok()) << app.status().message();
  spawner::SpawnerOptions options;
  options.net = Member("spawner", proto::Role::SPAWNER);
  options.spares = 1;
  options.failure_timeout = 60s;  // only Stop() ends a daemon here
  spawner::RunSettings settings;
  settings.replacement_wait = 0ms;  // no daemon comes but the spare: fail at the second loss
  spawner::JobRunner runner(*job, *app, options, settings, log_);
  std::optional<spawner::RunSummary> summary;
  StartRun(runner, sn, summary);

  // Running, and checkpoints acknowledged: copies are being sent, received and stored.
  auto checkpoints = [&] {
    auto p = runner.progress();
    return p ? p->checkpoints : 0;
  };
  ASSERT_TRUE(RunUntil([&] {
    return runner.RunningTaskDaemons().size() == 3 && checkpoints() >= 6;
  })) << "the tasks never ran with checkpoints";

  // Stop and destroy the daemons one at a time, each while the others run, iterate and send it
  // their checkpoints; the spare takes over the first one's task, the second one's loss ends the
  // run, and the last ones stop idle.
  for (size_t i = 0; i < daemons.size(); ++i) {
    Daemon& d = daemons[i];
    ASSERT_TRUE(StopDaemon(d, 60s)) << "daemon " << i + 1 << " never stopped";
    d.host.reset();
    d.link.reset();
    // Let the others go on past the loss: values and checkpoints for the stopped daemon,
    // reconnection attempts, the replacement.
    const uint64_t before = checkpoints();
    RunUntil([&] { return summary || checkpoints() >= before + 3; }, 20s);
  }
  ASSERT_TRUE(RunUntil([&] { return summary.has_value(); })) << "the run never ended";
  EXPECT_EQ(summary->status, spawner::RunStatus::kFailed) << summary->error;

  ASSERT_TRUE(StopSupernode());
  supernode_.reset();
  // Nothing is left waiting: the loop runs out of work by itself.
  io_.restart();
  io_.run_for(30s);
  EXPECT_TRUE(io_.stopped()) << "work still pending 30 s after everything stopped";
}

// A job's links wait on clocks of their own between two reports or probes; when the job ends they
// end at once, not when their clock next rings, so a daemon stopped right after a job does not
// wait for them (with the probes' second, every local run's daemons took up to 1 s to exit).
TEST_F(StopTest, ADaemonStopsAtOnceAfterItsJobWhateverItsClocks) {
  const Endpoint sn = StartSupernode();
  std::vector<Daemon> daemons;
  for (const char* id : {"d1", "d2"}) daemons.push_back(StartDaemon(id, sn, std::chrono::hours(1)));
  testing::WriteFile(dir_ / "cg.toml",
                     "name = \"quick\"\napp = \"cg\"\ntasks = 2\ntimeout_s = 300\n[params]\n"
                     "n = 2000\nbandwidth = 4\n");
  auto job = spawner::LoadJobSpec(dir_ / "cg.toml");
  ASSERT_TRUE(job.ok()) << job.status().message();
  auto app = spawner::LoadAndPrepare(*job, spawner::DefaultPluginDir());
  ASSERT_TRUE(app.ok()) << app.status().message();
  spawner::SpawnerOptions options;
  options.net = Member("spawner", proto::Role::SPAWNER);
  spawner::JobRunner runner(*job, *app, options, spawner::RunSettings{}, log_);
  std::optional<spawner::RunSummary> summary;
  StartRun(runner, sn, summary);
  ASSERT_TRUE(RunUntil([&] { return summary.has_value(); })) << "the run never ended";
  EXPECT_EQ(summary->status, spawner::RunStatus::kConverged) << summary->error;
  // The bound is generous; without the clocks cancelled the stop would take an hour.
  for (Daemon& d : daemons)
    ASSERT_TRUE(StopDaemon(d, 60s)) << "a daemon waited for its job's clocks";
  daemons.clear();
  ASSERT_TRUE(StopSupernode());
}

}  // namespace
}  // namespace aiac
