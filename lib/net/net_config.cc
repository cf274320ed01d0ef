#include "net/net_config.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/ed25519.h"
#include "core/hex.h"
#include "core/private_file.h"
#include "net/identity.h"
#include "net/random.h"
#include "net/revocation.h"
#include "net/tls.h"

namespace aiac::net {

namespace {

constexpr const char* kHowToMakeOne =
    "make one with `aiac-spawner keygen --out cluster.key` and set cluster_key_file = "
    "\"cluster.key\"";

}  // namespace

void DeclareNetOptions(OptionSet& set, NetOptions& o) {
  set.Section("common");
  set.Path("cluster_key_file", o.cluster_key_file,
           "file holding the platform's shared secret (mode 600); the TLS key is derived from it")
      .Default("`cluster.key` in the shipped configs");
  set.Text("cluster_key", o.cluster_key, "the secret inline instead (not both); at least 16 bytes")
      .NoFlag();
  set.Integer("max_frame_bytes", o.limits.max_frame_bytes, 1, ConfigFile::kMaxPositive,
              "largest frame accepted from an authenticated peer; larger messages are sent in "
              "parts");
  set.Integer("max_message_bytes", o.limits.max_message_bytes, 1, ConfigFile::kMaxPositive,
              "largest message reassembled from parts (also bounded by the memory the process may "
              "use)");
  set.Duration("handshake_timeout_ms", o.handshake_timeout,
               "longest a connect plus handshake may take");
  set.Integer("max_protocol_version", o.max_protocol_version, kMinProtocolVersion, kProtocolVersion,
              "newest protocol version offered to peers (each pair speaks the newest both offer); "
              "lower only to hold a newer version back while hosts are upgraded")
      .Default(std::to_string(kProtocolVersion) + " (this build's)");
  set.List("authority_keys", o.authority_keys,
           "public keys (64 hex characters) of the deployment authorities whose certificates "
           "this process believes (`aiac-spawner keygen --authority PREFIX` makes one)")
      .Flag("--authority-key")
      .Default("none (required)");
  set.Path("identity_key_file", o.identity_key_file,
           "this process's own Ed25519 key (PEM, mode 600), made at first start when missing")
      .Default("`DATA/identity.key` (super-node, daemon)");
  set.Path("certificate_file", o.certificate_file,
           "the certificate an authority gave that key (`aiac-spawner certify`)")
      .Default("`DATA/identity.cert` (super-node, daemon)");
  set.List("revoked_keys", o.revoked_keys,
           "public keys (64 hex characters) of nodes or authorities no longer believed")
      .Flag("--revoked-key");
  set.Path("revocation_file", o.revocation_file,
           "an authority's signed revocation list (`aiac-spawner revoke`), read at start; the "
           "newer lists super-nodes pass on are written back to it")
      .Default("`DATA/revocations.json` (super-node, daemon)");
  set.Integer("memory_budget_mb", o.memory_budget_mb, 0, ConfigFile::kMaxPositive,
              "MiB this process may hold for what peers declared they would send (messages in "
              "parts, task and plugin data, large frames being read), all connections together; "
              "0 = half the memory available at start, at least 256");
}

void DeclareServerLimits(OptionSet& set, ServerLimits& limits) {
  set.Section("listening");
  set.Integer("max_connections", limits.max_connections, 1, ConfigFile::kMaxPositive,
              "connections open at once (capped by the descriptor limit minus 64; the process "
              "raises its soft limit towards this + 64 at start)");
  set.Integer("max_handshakes", limits.max_handshakes, 1, ConfigFile::kMaxPositive,
              "handshakes in progress at once");
  set.Integer("max_handshakes_per_address", limits.max_handshakes_per_address, 1,
              ConfigFile::kMaxPositive, "handshakes in progress at once from one IP address");
  set.Duration("stalled_handshake_ms", limits.stalled_handshake,
               "a handshake pending this long is closed to admit a newcomer when a handshake cap "
               "is reached");
}

double KeyEntropyBits(std::string_view key) {
  std::array<size_t, 256> count{};
  for (unsigned char c : key) ++count[c];
  double bits = 0;
  for (size_t n : count) {
    if (n == 0) continue;
    const double p = static_cast<double>(n) / static_cast<double>(key.size());
    bits -= static_cast<double>(n) * std::log2(p);
  }
  return bits;
}

Status CheckClusterKey(std::string_view key) {
  if (key.empty()) {
    return InvalidArgument(std::string("cluster_key is not set: ") + kHowToMakeOne);
  }
  if (key == kPlaceholderKey) {
    return InvalidArgument(std::string("cluster_key is the shipped placeholder: ") + kHowToMakeOne);
  }
  if (key.size() < kMinKeyBytes) {
    return InvalidArgument("cluster_key is " + std::to_string(key.size()) +
                           " bytes, shorter than " + std::to_string(kMinKeyBytes) + ": " +
                           kHowToMakeOne);
  }
  if (const double bits = KeyEntropyBits(key); bits < kMinKeyEntropyBits) {
    char text[32];
    std::snprintf(text, sizeof text, "%.0f", bits);
    return InvalidArgument(std::string("cluster_key is not random (about ") + text +
                           " bits of entropy, at least " + std::to_string(kMinKeyEntropyBits) +
                           " needed): " + kHowToMakeOne);
  }
  return Status::Ok();
}

Result<std::string> ReadKeyFile(const std::string& path) {
  AIAC_RETURN_IF_ERROR(CheckPrivateFile("cluster_key_file", path));
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return IoError("cannot read cluster_key_file " + path);
  const auto first = line.find_first_not_of(" \t\r");
  const auto last = line.find_last_not_of(" \t\r");
  if (first == std::string::npos) return InvalidArgument("cluster_key_file " + path + " is empty");
  return line.substr(first, last - first + 1);
}

namespace {

Result<std::vector<std::string>> ParseKeys(const std::vector<std::string>& hex,
                                           const char* option) {
  std::vector<std::string> raw;
  for (const auto& key : hex) {
    auto parsed = ParsePublicKey(key, std::string("each of '") + option + "'");
    if (!parsed.ok()) return parsed.status();
    raw.push_back(std::move(*parsed));
  }
  return raw;
}

}  // namespace

Result<Trust> LoadTrust(const NetOptions& options) {
  if (options.authority_keys.empty()) {
    return InvalidArgument(
        "option 'authority_keys' is empty: list the public key of the deployment's authority "
        "(`aiac-spawner keygen --authority PREFIX` writes PREFIX.pub), whose certificates name "
        "every process's id and role");
  }
  Trust trust;
  AIAC_ASSIGN_OR_RETURN(trust.authorities, ParseKeys(options.authority_keys, "authority_keys"));
  AIAC_ASSIGN_OR_RETURN(auto revoked, ParseKeys(options.revoked_keys, "revoked_keys"));
  trust.revoked =
      std::make_shared<RevokedKeys>(std::set<std::string>(revoked.begin(), revoked.end()));
  std::error_code ec;
  if (!options.revocation_file.empty() && std::filesystem::exists(options.revocation_file, ec)) {
    AIAC_ASSIGN_OR_RETURN(auto lists, LoadRevocationLists(options.revocation_file));
    for (const auto& list : lists) {
      auto adopted = trust.revoked->Adopt(list, trust.authorities);
      if (!adopted.ok()) {
        return Status(adopted.status().code(),
                      options.revocation_file + ": " + adopted.status().message());
      }
    }
  }
  return trust;
}

namespace {

Status LoadIdentity(NetOptions& options, proto::Role role, bool may_enroll) {
  AIAC_ASSIGN_OR_RETURN(Trust trust, LoadTrust(options));
  if (options.identity_key_file.empty()) {
    return InvalidArgument("option 'identity_key_file' is not set: this process's own key");
  }
  if (options.certificate_file.empty()) {
    return InvalidArgument("option 'certificate_file' is not set: the certificate of its key");
  }
  bool made = false;
  AIAC_ASSIGN_OR_RETURN(Ed25519Key key, LoadOrMakeIdentityKey(options.identity_key_file, made));
  std::error_code ec;
  if (!std::filesystem::exists(options.certificate_file, ec)) {
    if (may_enroll) {
      options.identity = MakeEnrollingIdentity(std::move(key), std::move(trust));
      return Status::Ok();
    }
    return NotFound(std::string("no certificate ") + options.certificate_file + " for " +
                    (made ? "the identity key just made at " : "the identity key ") +
                    options.identity_key_file +
                    ": have the authority certify it with "
                    "`aiac-spawner certify --authority-key AUTHORITY.key --role " +
                    RoleName(role) + " --id ID " + key.PublicHex() + " --out " +
                    options.certificate_file + "`" +
                    (role == proto::Role::DAEMON ? ", or enroll with a token (enroll_token)" : ""));
  }
  AIAC_ASSIGN_OR_RETURN(Certificate cert, LoadCertificate(options.certificate_file));
  if (cert.role != role) {
    return InvalidArgument(options.certificate_file + " certifies a " + RoleName(cert.role) +
                           ", not a " + RoleName(role));
  }
  auto identity = MakeNodeIdentity(std::move(key), std::move(cert), std::move(trust));
  if (!identity.ok()) {
    return Status(identity.status().code(),
                  options.certificate_file + ": " + identity.status().message());
  }
  options.identity = *identity;
  return Status::Ok();
}

}  // namespace

Status AdoptCertifiedId(const NetOptions& options, std::string& id) {
  if (!options.identity) return Status::Ok();
  const std::string& certified = options.identity->certificate.id;
  if (id.empty()) {
    id = certified;
  } else if (id != certified) {
    return InvalidArgument("id '" + id + "' is not the one this process's certificate names ('" +
                           certified + "'): leave the id out, or use that one");
  }
  return Status::Ok();
}

Status FinishNetOptions(NetOptions& options, proto::Role role, bool may_enroll) {
  if (!options.cluster_key_file.empty()) {
    if (!options.cluster_key.empty()) {
      return InvalidArgument("set cluster_key or cluster_key_file, not both");
    }
    AIAC_ASSIGN_OR_RETURN(auto key, ReadKeyFile(options.cluster_key_file));
    options.cluster_key = std::move(key);
  }
  AIAC_RETURN_IF_ERROR(CheckClusterKey(options.cluster_key));
  if (options.limits.max_frame_bytes < 1024) {
    return InvalidArgument("max_frame_bytes must be at least 1024");
  }
  auto tls = TlsContext::Make(options.cluster_key);
  if (!tls.ok()) return tls.status();
  options.tls = *tls;
  if (!options.identity) AIAC_RETURN_IF_ERROR(LoadIdentity(options, role, may_enroll));
  if (!options.budget) {
    const uint64_t mb = std::min<uint64_t>(options.memory_budget_mb, uint64_t{1} << 40);
    options.budget = std::make_shared<MemoryBudget>(mb > 0 ? mb << 20 : DefaultMemoryBudgetBytes());
  }
  return Status::Ok();
}

std::string NewClusterKey() { return Hex(RandomBytes(32)); }

}  // namespace aiac::net
