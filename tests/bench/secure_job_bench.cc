// A CG job's wall time with the TLS transport against the same job with the same framing
// unencrypted, measured in the same run. The shipped binaries cannot run unencrypted, so this
// benchmark builds the platform in one process from the same service classes the binaries
// use: a super-node (SupernodeService, registry in memory), N daemons (TaskHost and
// SupernodeLink) and the spawner (JobRunner), on one io_context over loopback, each task
// computing on its own thread as in a daemon. The two transports run alternately, twice each.
// Prints the job times (the summary's wall_seconds) and their ratio; never fails on a time.
// Run: build/bin/secure_job_bench [n bandwidth daemons]
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "checkpoint/memory_checkpoint_store.h"
#include "core/self_directory.h"
#include "daemon/supernode_link.h"
#include "daemon/task_host.h"
#include "net/tls.h"
#include "spawner/app_loader.h"
#include "spawner/job_runner.h"
#include "supernode/supernode_service.h"
#include "support/identities.h"

using namespace aiac;
namespace asio = net::asio;

namespace {

struct Outcome {
  double job_seconds = -1;
  std::string status, detail;
};

Outcome RunJob(net::Transport transport, const std::string& dir, const std::string& job_file,
               int daemons) {
  const std::string tag = transport == net::Transport::kTls ? "tls" : "plain";
  Logger log = MakeLogger("bench-" + tag, spdlog::level::warn);
  net::NetOptions net;
  net.cluster_key = "secure-job-bench-key-0123456789";
  net.transport = transport;
  net.tls = *net::TlsContext::Make(net.cluster_key);
  // Every process certified, as on a real platform: both runs pay for the identities alike.
  const testing::TestAuthority authority;
  auto member = [&](const std::string& id, proto::Role role) {
    net::NetOptions o = net;
    o.identity = authority.Identity(id, role);
    return o;
  };

  asio::io_context io;
  supernode::SupernodeOptions sn_options;
  sn_options.id = "sn-bench";
  sn_options.net = member(sn_options.id, proto::Role::SUPERNODE);
  supernode::Registry registry(sn_options.id, nullptr);
  supernode::SupernodeService service(io, sn_options, registry, log);
  auto sn = service.Start(Endpoint{"127.0.0.1", 0});
  if (!sn.ok()) return {-1, "failed", sn.status().message()};

  std::vector<std::unique_ptr<daemon::TaskHost>> hosts;
  std::vector<std::unique_ptr<daemon::SupernodeLink>> links;
  for (int i = 0; i < daemons; ++i) {
    const std::string id = "d" + std::to_string(i + 1);
    const net::NetOptions daemon_net = member(id, proto::Role::DAEMON);
    daemon::TaskHostOptions options{id,
                                    daemon_net,
                                    std::chrono::milliseconds(250),
                                    dir + "/" + tag + "-" + id + "/plugins",
                                    {{}, true, {}},
                                    {},
                                    {},
                                    {}};
    options.app_child_executable = SelfDirectory() + "/aiac-app-child";
    options.task_dir = dir + "/" + tag + "-" + id + "/tasks";
    auto host = std::make_unique<daemon::TaskHost>(
        io, options, std::make_unique<checkpoint::MemoryCheckpointStore>(), log);
    auto bound = host->Listen(Endpoint{"127.0.0.1", 0});
    if (!bound.ok()) return {-1, "failed", bound.status().message()};
    host->set_id(id);
    host->Serve();
    daemon::SelfDescription self{id, bound->ToString(), "default", 1.0, 1};
    daemon::TaskHost* h = host.get();
    links.push_back(std::make_unique<daemon::SupernodeLink>(
        io.get_executor(), std::vector<Endpoint>{*sn}, self, daemon_net,
        std::chrono::milliseconds(1000), log, [h] { return h->busy(); }, [](Status) {},
        [](const net::RevocationList&) {}));
    links.back()->Start();
    hosts.push_back(std::move(host));
  }

  auto job = spawner::LoadJobSpec(job_file);
  if (!job.ok()) return {-1, "failed", job.status().message()};
  auto app = spawner::LoadAndPrepare(*job, spawner::DefaultPluginDir());
  if (!app.ok()) return {-1, "failed", app.status().message()};
  spawner::SpawnerOptions sp;
  sp.net = member("spawner-bench", proto::Role::SPAWNER);
  sp.progress = std::chrono::milliseconds(60000);
  spawner::JobRunner runner(*job, *app, sp, spawner::RunSettings{}, log);
  spawner::RunSummary summary;
  asio::co_spawn(
      io,
      [&]() -> net::awaitable<void> {
        std::vector<Endpoint> at = {*sn};
        summary = co_await runner.Run(std::move(at));
        for (auto& l : links) co_await l->Stop();
        for (auto& h : hosts) co_await h->Stop();
        co_await service.Stop();
        io.stop();
      },
      asio::detached);
  io.run();
  char detail[160];
  std::snprintf(detail, sizeof detail, "residual %.2e, %s", summary.residual,
                summary.error.c_str());
  return {summary.wall_seconds, spawner::RunStatusName(summary.status), detail};
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 200000;
  const int bw = argc > 2 ? std::atoi(argv[2]) : 12;
  const int daemons = argc > 3 ? std::atoi(argv[3]) : 4;
  const std::string dir = std::filesystem::temp_directory_path().string() + "/aiac-secure-bench-" +
                          std::to_string(getpid());
  std::filesystem::create_directories(dir);
  const std::string job = dir + "/cg.toml";
  std::ofstream(job) << "name = \"cg-bench\"\napp = \"cg\"\ntasks = " << daemons
                     << "\ntimeout_s = 600\n[params]\nn = " << n << "\nbandwidth = " << bw
                     << "\nseed = 7\ntolerance = 1e-9\n";
  double best[2] = {1e300, 1e300};
  int failures = 0;
  for (int round = 0; round < 2; ++round) {
    for (int k = 0; k < 2; ++k) {
      const auto transport =
          k == 0 ? net::Transport::kTls : net::Transport::kPlaintextBenchmarkOnly;
      Outcome o = RunJob(transport, dir, job, daemons);
      std::printf("  %-22s job %.2f s (%s, %s)\n", k == 0 ? "TLS 1.3" : "framed, no encryption",
                  o.job_seconds, o.status.c_str(), o.detail.c_str());
      if (o.status != "converged")
        ++failures;
      else
        best[k] = std::min(best[k], o.job_seconds);
    }
  }
  std::filesystem::remove_all(dir);
  std::printf(
      "secure_job_bench: CG n = %d, bandwidth %d, %d daemons in one process: TLS %.2f s, "
      "unencrypted %.2f s (best of 2): ratio tls/plain %.2fx\n",
      n, bw, daemons, best[0], best[1], best[0] / best[1]);
  return failures == 0 ? 0 : 1;
}
