// A hand-started platform for integration tests: super-nodes and daemons as real processes on
// loopback (free ports chosen by the kernel), logs and data in a temporary directory. Every
// process is stopped and reaped by the destructors, also when an assertion fails.
#pragma once

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "net/connection.h"
#include "net/identity.h"
#include "runtime/code_signing.h"
#include "support/identities.h"
#include "support/processes.h"

namespace aiac::testing {

// The key every process of a fixture's platform shares (key.toml).
inline constexpr const char* kClusterKey = "integration-key-0123456789";

class ClusterFixture : public ::testing::Test {
 protected:
  ClusterFixture() {
    // Children of this test (and their temporary directories) live under dir_.
    if (const char* old = getenv("TMPDIR")) saved_tmpdir_ = old;
    setenv("TMPDIR", dir_.path().c_str(), 1);
    WriteFile(dir_ / "key.toml", std::string("cluster_key = \"") + kClusterKey + "\"\n");
    WriteFile(dir_ / "wrong.toml", "cluster_key = \"not-the-key-0123456789\"\n");
    std::filesystem::create_directories(dir_ / "ids");
    auto publisher = runtime::SigningKey::Generate();
    EXPECT_TRUE(publisher.ok()) << publisher.status().message();
    if (publisher.ok()) {
      WriteFile(dir_ / "publisher.key", publisher->PrivatePem());
      std::filesystem::permissions(dir_ / "publisher.key", std::filesystem::perms::owner_read);
      publisher_pub_ = publisher->PublicHex();
    }
  }

  // A fixture platform is set up as a real one is (docs/security.md):
  // - every process believes the fixture's authority (--authority-key) and has an identity it
  //   certified: a key and a certificate in dir_/ids, for its --id (a super-node or daemon) or
  //   "spawner" (every hand-run spawner), unless the test gives --identity-key-file;
  // - daemons run only signed plugins: they trust the fixture's publisher key, and the hand-run
  //   spawners sign with it.
  // A test that chooses for itself passes the flag concerned (`--identity-key-file`,
  // `--trusted-key` or `--allow-unsigned-plugins` to a daemon, `--sign-with` to a
  // spawner); `--local` runs make their own.
  std::vector<std::string> Signed(const std::string& binary, std::vector<std::string> args) const {
    auto has = [&](const char* flag) {
      return std::find(args.begin(), args.end(), flag) != args.end();
    };
    const bool run = binary == "aiac-spawner" && !args.empty() && args[0] == "run";
    if (binary == "aiac-daemon" && !has("--trusted-key") && !has("--allow-unsigned-plugins")) {
      args.insert(args.end(), {"--trusted-key", publisher_pub_});
    } else if (run && !has("--local") && !has("--sign-with")) {
      args.insert(args.end(), {"--sign-with", dir_ / "publisher.key"});
    }
    // `status` and `cancel` ask the super-nodes with a spawner's credentials.
    const bool asks =
        binary == "aiac-spawner" && !args.empty() && (args[0] == "status" || args[0] == "cancel");
    const bool member = binary != "aiac-spawner" || (run && !has("--local")) || asks;
    if (member && !has("--authority-key")) {
      args.insert(args.end(), {"--authority-key", authority_.PublicHex()});
    }
    if (member && !has("--identity-key-file")) {
      auto id = std::find(args.begin(), args.end(), "--id");
      const std::string name = id != args.end() && id + 1 != args.end() ? *(id + 1) : "spawner";
      const proto::Role role = binary == "aiac-supernode" ? proto::Role::SUPERNODE
                               : binary == "aiac-daemon"  ? proto::Role::DAEMON
                                                          : proto::Role::SPAWNER;
      const auto [key, cert] = IdentityFiles(name, role);
      args.insert(args.end(), {"--identity-key-file", key, "--certificate-file", cert});
    }
    return args;
  }
  // The key and certificate files of `name` as `role` in dir_/ids, made at the first call.
  std::pair<std::string, std::string> IdentityFiles(const std::string& name,
                                                    proto::Role role) const {
    const std::string key = dir_ / ("ids/" + name + ".key"),
                      cert = dir_ / ("ids/" + name + ".cert");
    if (!std::filesystem::exists(cert)) {
      Status made =
          net::WriteNewIdentity(authority_.key(), name, role, net::UnixNow() + 86400, key, cert);
      EXPECT_TRUE(made.ok()) << made.message();
    }
    return {key, cert};
  }
  // The fixture's authority key as a file (mode 600), for the authority's commands (`aiac-spawner
  // certify`, `enroll-token`, `revoke`).
  std::string AuthorityKeyFile() const {
    const std::string path = dir_ / "authority.key";
    if (!std::filesystem::exists(path)) {
      WriteFile(path, authority_.key().PrivatePem());
      std::filesystem::permissions(
          path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    }
    return path;
  }
  // The network options of a process that holds the cluster key and a certificate of the
  // fixture's authority for `id` as `role`: a member of the platform, as tests play one.
  net::NetOptions Member(const std::string& id, proto::Role role) const {
    return authority_.Member(kClusterKey, id, role);
  }

  spawner::ChildProcess Start(const std::string& binary, const std::vector<std::string>& args,
                              const std::string& log) const {
    return testing::Start(binary, Signed(binary, args), log);
  }

  // Starts a super-node; returns its HOST:PORT.
  std::string StartSupernode(const std::string& name, std::vector<std::string> extra = {},
                             const std::string& listen = "127.0.0.1:0",
                             const std::string& config = "key.toml") {
    std::vector<std::string> args{"--config",     dir_ / config,
                                  "--listen",     listen,
                                  "--id",         name,
                                  "--data",       dir_ / (name + ".db"),
                                  "--ready-file", dir_ / (name + ".addr")};
    args.insert(args.end(), extra.begin(), extra.end());
    std::remove((dir_ / (name + ".addr")).c_str());
    procs_.insert_or_assign(name, Start("aiac-supernode", args, dir_ / (name + ".log")));
    std::string addr = WaitForFile(dir_ / (name + ".addr"));
    EXPECT_FALSE(addr.empty()) << "super-node " << name << " did not start:\n" << Log(name);
    return addr;
  }

  void StartDaemon(const std::string& name, const std::vector<std::string>& supernodes,
                   const std::string& config = "key.toml", const std::string& power = "1",
                   const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args{"--config",  dir_ / config, "--id", name,          "--data",
                                  dir_ / name, "--power",     power,  "--log-level", "debug"};
    args.insert(args.end(), extra.begin(), extra.end());
    for (const auto& s : supernodes) {
      args.push_back("--supernode");
      args.push_back(s);
    }
    procs_.insert_or_assign(name, Start("aiac-daemon", args, dir_ / (name + ".log")));
  }

  // Runs the spawner to completion; returns its exit code (-1 on timeout).
  int RunSpawner(const std::vector<std::string>& args, const std::string& log = "spawner",
                 std::chrono::milliseconds timeout = std::chrono::milliseconds(60000)) {
    auto child = Start("aiac-spawner", args, dir_ / (log + ".log"));
    auto code = child.WaitFor(timeout);
    return code.value_or(-1);
  }

  // A ring job file with `tasks` tasks and `rounds` rounds.
  std::string RingJob(int tasks, int rounds, const std::string& name = "ring.toml") {
    WriteFile(dir_ / name, "name = \"ring-it\"\napp = \"ring\"\ntasks = " + std::to_string(tasks) +
                               "\ntimeout_s = 60\n[params]\nrounds = " + std::to_string(rounds) +
                               "\n");
    return dir_ / name;
  }

  std::string WriteJob(const std::string& name, const std::string& content) {
    WriteFile(dir_ / name, content);
    return dir_ / name;
  }

  // Runs `aiac-spawner status ...` (or `cancel`) with the fixture's key and a spawner's
  // identity; its exit code, and what it printed in `out`.
  int Ask(std::vector<std::string> args, std::string& out, const std::string& log = "ask") {
    args.insert(args.begin() + 1, {"--config", dir_ / "key.toml"});
    const int code = RunSpawner(args, log, std::chrono::seconds(60));
    out = Log(log);
    return code;
  }

  std::string Log(const std::string& name) { return ReadFile(dir_ / (name + ".log")); }
  // HOST:PORT of process `name`'s metrics, from the line it logs once serving them.
  std::string MetricsAddress(const std::string& name) {
    std::smatch m;
    const std::regex at("metrics at http://([0-9.]+:[0-9]+)/metrics");
    std::string log;
    EXPECT_TRUE(WaitUntil([&] {
      log = Log(name);
      return std::regex_search(log, m, at);
    })) << log;
    return m.empty() ? "" : m[1].str();
  }

  bool LogHas(const std::string& name, const std::string& text) {
    return Log(name).find(text) != std::string::npos;
  }
  nlohmann::json Json(const std::string& file) {
    return nlohmann::json::parse(ReadFile(dir_ / file));
  }

  ~ClusterFixture() override {
    procs_.clear();  // stop the children before their directory goes
    if (saved_tmpdir_)
      setenv("TMPDIR", saved_tmpdir_->c_str(), 1);
    else
      unsetenv("TMPDIR");
  }

  TempDir dir_;
  std::string publisher_pub_;  // the public half of dir_/publisher.key
  TestAuthority authority_;    // certifies every process of the platform
  std::optional<std::string> saved_tmpdir_;
  std::map<std::string, spawner::ChildProcess> procs_;
};

}  // namespace aiac::testing
