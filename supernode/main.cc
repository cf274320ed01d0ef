// aiac-supernode: keeps the registry of free daemons and hands them to spawners.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>

#include "core/atomic_file.h"
#include "core/endpoint.h"
#include "core/logging.h"
#include "core/usage_error.h"
#include "net/descriptors.h"
#include "net/http_server.h"
#include "net/net_config.h"
#include "net/shutdown.h"
#include "net/version.h"
#include "supernode/registry.h"
#include "supernode/registry_store.h"
#include "supernode/supernode_service.h"

namespace {

int Fail(const aiac::Status& s) {
  std::fprintf(stderr, "aiac-supernode: %s\n", s.message().c_str());
  return 2;
}

// Longest a stop may take: held requests and peer links end within seconds.
constexpr std::chrono::seconds kStopLimit{30};

}  // namespace

int main(int argc, char** argv) {
  using namespace aiac;
  CLI::App app{"aiac super-node: registry of free daemons"};
  app.set_version_flag("--version", aiac::net::VersionLine("aiac-supernode"));
  std::string config;
  app.add_option("--config", config, "TOML options file (see conf/supernode.toml)");
  supernode::SupernodeOptions options;
  OptionSet declared;
  supernode::DeclareSupernodeOptions(declared, options);
  declared.AddFlags(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return aiac::UsageError(app, e, argc, argv);  // 0 for --help, --version; else 2
  }
  if (Status s = declared.Load(config); !s.ok()) return Fail(s);
  if (options.net.identity_key_file.empty())
    options.net.identity_key_file = options.data_dir + "/identity.key";
  if (options.net.certificate_file.empty())
    options.net.certificate_file = options.data_dir + "/identity.cert";
  if (options.net.revocation_file.empty())
    options.net.revocation_file = options.data_dir + "/revocations.json";
  if (Status s = net::FinishNetOptions(options.net, proto::Role::SUPERNODE); !s.ok())
    return Fail(s);
  if (Status s = net::AdoptCertifiedId(options.net, options.id); !s.ok()) return Fail(s);
  options.net.accept_enrollment = options.net.identity->certificate.enroller;
  auto log_level = ParseLogLevel(options.log_level);
  if (!log_level.ok()) return Fail(log_level.status());
  auto endpoint = ParseEndpoint(options.listen);
  if (!endpoint.ok()) return Fail(endpoint.status());
  for (const auto& p : options.peers) {
    if (auto e = ParseEndpoint(p); !e.ok()) return Fail(e.status());
  }
  auto log_format = ParseLogFormat(options.log_format);
  if (!log_format.ok()) return Fail(log_format.status());
  Logger log = MakeLogger("supernode", *log_level, *log_format);

  auto store = supernode::RocksDbRegistryStore::Open(options.data_dir);
  if (!store.ok()) return Fail(store.status());
  for (const auto& warning : (*store)->recovery_warnings()) {
    log->warn(
        "registry store {}: write-ahead log recovery dropped data ({}); daemons registered "
        "after that point were lost and will register again",
        options.data_dir, warning);
  }
  supernode::Registry registry(options.id, store->get());
  if (Status s = registry.Load(supernode::Registry::Clock::now()); !s.ok()) return Fail(s);

  // A descriptor per connection: a shell's soft limit (often 1,024) would cap the daemons held.
  net::RaiseDescriptorLimit(options.limits.max_connections + net::kReservedDescriptors);
  net::asio::io_context io;
  supernode::SupernodeService service(io, options, registry, log, store->get());
  auto bound = service.Start(*endpoint);
  if (!bound.ok()) return Fail(bound.status());
  log->info(
      "super-node {} listening on {} ({} daemons in registry, {} peers, up to {} connections{})",
      options.id, bound->ToString(), registry.size(), options.peers.size(),
      service.max_connections(), options.net.accept_enrollment ? ", enrolls daemons" : "");
  if (!options.ready_file.empty()) {
    if (Status s = WriteFileAtomically(options.ready_file, bound->ToString()); !s.ok())
      return Fail(s);
  }

  net::HttpServer http(io, log);
  if (!options.metrics.empty()) {
    service.ServeWeb(http);
    if (auto at = net::ServeMetrics(http, options.metrics, log); !at.ok()) return Fail(at.status());
  }

  net::Shutdown shutdown(
      io, log,
      [&]() -> net::awaitable<void> {
        co_await http.Stop();
        co_await service.Stop();
      },
      kStopLimit);
  io.run();
  return 0;
}
