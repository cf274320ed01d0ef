#include "spawner/keygen_command.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/ed25519.h"
#include "core/status.h"
#include "core/write_all.h"
#include "net/net_config.h"

namespace aiac::spawner {

namespace {

// Creates `path` with mode 600 (never replacing an existing file) and writes `content`.
Status WritePrivateFile(const std::string& path, const std::string& content, mode_t mode) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, mode);
  if (fd < 0) return IoError("cannot create " + path + ": " + std::strerror(errno));
  if (const int err = WriteAll(fd, content); err != 0) {
    ::close(fd);
    return IoError("cannot write " + path + ": " + std::strerror(err));
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) return IoError("cannot write " + path);
  return Status::Ok();
}

int Fail(const Status& s) {
  std::fprintf(stderr, "aiac-spawner: %s\n", s.message().c_str());
  return 2;
}

}  // namespace

CLI::App* AddKeygenCommand(CLI::App& app, KeygenArgs& args) {
  CLI::App* cmd = app.add_subcommand("keygen", "make a cluster key, or a plugin-signing key pair");
  auto* out = cmd->add_option("--out", args.out, "write the cluster key to this file (mode 600)");
  auto* signing = cmd->add_option("--signing", args.signing,
                                  "write an Ed25519 signing key pair to PREFIX.key and PREFIX.pub")
                      ->excludes(out);
  cmd->add_option("--authority", args.authority,
                  "write a deployment authority's key pair to PREFIX.key and PREFIX.pub")
      ->excludes(out)
      ->excludes(signing);
  return cmd;
}

int KeygenCommand(const KeygenArgs& args) {
  if (!args.signing.empty() || !args.authority.empty()) {
    const std::string& prefix = args.signing.empty() ? args.authority : args.signing;
    auto key = Ed25519Key::Generate();
    if (!key.ok()) return Fail(key.status());
    if (Status s = WritePrivateFile(prefix + ".key", key->PrivatePem(), 0600); !s.ok()) {
      return Fail(s);
    }
    if (Status s = WritePrivateFile(prefix + ".pub", key->PublicHex() + "\n", 0644); !s.ok()) {
      return Fail(s);
    }
    std::printf("%s\n", key->PublicHex().c_str());
    return 0;
  }
  const std::string key = net::NewClusterKey();
  if (args.out.empty()) {
    std::printf("%s\n", key.c_str());
    return 0;
  }
  if (Status s = WritePrivateFile(args.out, key + "\n", 0600); !s.ok()) return Fail(s);
  return 0;
}

}  // namespace aiac::spawner
