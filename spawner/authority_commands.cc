#include "spawner/authority_commands.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "core/atomic_file.h"
#include "core/ed25519.h"
#include "core/hex.h"
#include "net/certificate.h"
#include "net/enrollment_token.h"
#include "net/identity.h"
#include "net/random.h"
#include "net/revocation.h"

namespace aiac::spawner {
namespace {

int Fail(const char* command, const Status& s) {
  std::fprintf(stderr, "aiac-spawner %s: %s\n", command, s.message().c_str());
  return 2;
}

Status RefuseExisting(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) return InvalidArgument(path + " exists already");
  return Status::Ok();
}

void AddAuthorityKey(CLI::App* cmd, std::string& path) {
  cmd->add_option("--authority-key", path,
                  "the authority's private key (PEM; `keygen --authority PREFIX` made it)")
      ->required();
}

constexpr int64_t kDay = 24 * 3600;

// Certifies as `args` asks; the certificate's path.
Result<std::string> WriteCertificate(const CertifyArgs& args, const Ed25519Key& authority,
                                     proto::Role role) {
  const int64_t expires = net::UnixNow() + int64_t{args.days} * kDay;
  if (!args.new_key.empty()) {
    const std::string key = args.new_key + ".key", cert = args.new_key + ".cert";
    AIAC_RETURN_IF_ERROR(RefuseExisting(key));
    AIAC_RETURN_IF_ERROR(RefuseExisting(cert));
    AIAC_RETURN_IF_ERROR(
        net::WriteNewIdentity(authority, args.id, role, expires, key, cert, args.enroller));
    return cert;
  }
  if (args.public_key.empty()) return InvalidArgument("give the node's public key, or --new-key");
  if (args.out.empty()) return InvalidArgument("--out FILE: where the certificate goes");
  AIAC_ASSIGN_OR_RETURN(std::string raw, ParsePublicKey(args.public_key, "the node's public key"));
  AIAC_ASSIGN_OR_RETURN(net::Certificate cert,
                        net::Certify(authority, args.id, role, raw, expires, args.enroller));
  AIAC_RETURN_IF_ERROR(RefuseExisting(args.out));
  AIAC_RETURN_IF_ERROR(WriteFileAtomically(args.out, net::CertificateJson(cert)));
  return args.out;
}

}  // namespace

CLI::App* AddCertifyCommand(CLI::App& app, CertifyArgs& args) {
  CLI::App* cmd = app.add_subcommand("certify", "certify a node's key as an id and a role");
  AddAuthorityKey(cmd, args.authority_key);
  cmd->add_option("--role", args.role, "super-node, daemon or spawner")->required();
  cmd->add_option("--id", args.id, "the node id the certificate names")->required();
  auto* key = cmd->add_option("public_key", args.public_key, "the node's public key (64 hex)");
  auto* made = cmd->add_option("--new-key", args.new_key,
                               "make the node's key pair here: PREFIX.key and PREFIX.cert");
  key->excludes(made);
  cmd->add_option("--out", args.out, "the certificate file (with a public key)")->excludes(made);
  cmd->add_option("--days", args.days, "days of validity (default 365)")
      ->check(CLI::Range(1, 36500));
  cmd->add_flag("--enroller", args.enroller,
                "a super-node that may certify daemons enrolling with a token");
  return cmd;
}

int CertifyCommand(const CertifyArgs& args) {
  auto authority = Ed25519Key::Load(args.authority_key, "authority key");
  if (!authority.ok()) return Fail("certify", authority.status());
  auto role = net::ParseRole(args.role);
  if (!role.ok()) return Fail("certify", role.status());
  auto path = WriteCertificate(args, *authority, *role);
  if (!path.ok()) return Fail("certify", path.status());
  auto written = net::LoadCertificate(*path);
  if (!written.ok()) return Fail("certify", written.status());
  std::printf("%s: %s %s%s, key %s, valid %d days\n", path->c_str(), net::RoleName(written->role),
              written->id.c_str(), written->enroller ? " (enroller)" : "",
              Hex(written->public_key).c_str(), args.days);
  return 0;
}

CLI::App* AddEnrollTokenCommand(CLI::App& app, EnrollTokenArgs& args) {
  CLI::App* cmd = app.add_subcommand("enroll-token",
                                     "make one-time tokens daemons enroll with at a super-node");
  AddAuthorityKey(cmd, args.authority_key);
  cmd->add_option("--supernode", args.supernode,
                  "the id of the enroller super-node that redeems them")
      ->required();
  auto* id = cmd->add_option("--id", args.id, "one token, for this daemon id");
  auto* count = cmd->add_option("--count", args.count, "this many tokens, each for a fresh id")
                    ->check(CLI::Range(1, 100000));
  id->excludes(count);
  cmd->add_option("--prefix", args.prefix, "with --count: the ids' prefix (default d-)")
      ->needs(count);
  cmd->add_option("--days", args.days, "days of validity of the certificates (default 365)")
      ->check(CLI::Range(1, 36500));
  cmd->add_option("--token-days", args.token_days,
                  "days before an unused token expires (default 7)")
      ->check(CLI::Range(1, 3650));
  return cmd;
}

int EnrollTokenCommand(const EnrollTokenArgs& args) {
  auto authority = Ed25519Key::Load(args.authority_key, "authority key");
  if (!authority.ok()) return Fail("enroll-token", authority.status());
  if (args.id.empty() && args.count == 0) {
    return Fail("enroll-token", InvalidArgument("give --id ID or --count N"));
  }
  std::vector<std::string> ids;
  if (!args.id.empty()) ids.push_back(args.id);
  for (int i = 0; i < args.count; ++i) ids.push_back(args.prefix + Hex(net::RandomBytes(4)));
  const int64_t expires = net::UnixNow() + int64_t{args.token_days} * kDay;
  for (const auto& node : ids) {
    auto token = net::MakeEnrollmentToken(*authority, node, args.supernode, expires,
                                          static_cast<uint32_t>(args.days));
    if (!token.ok()) return Fail("enroll-token", token.status());
    std::printf("%s %s\n", node.c_str(), net::EncodeEnrollmentToken(*token).c_str());
  }
  return 0;
}

CLI::App* AddRevokeCommand(CLI::App& app, RevokeArgs& args) {
  CLI::App* cmd = app.add_subcommand("revoke", "add keys to the authority's revocation list");
  AddAuthorityKey(cmd, args.authority_key);
  cmd->add_option("--list", args.list, "the revocation list file (made when missing)")->required();
  cmd->add_option("keys", args.keys, "public keys (64 hex) of nodes or authorities to revoke");
  cmd->add_option("--certificate", args.certificates, "revoke the key this certificate names");
  return cmd;
}

int RevokeCommand(const RevokeArgs& args) {
  auto authority = Ed25519Key::Load(args.authority_key, "authority key");
  if (!authority.ok()) return Fail("revoke", authority.status());
  std::vector<std::string> keys;
  std::vector<net::RevocationList> others;  // other authorities' lists the file holds
  uint64_t serial = 0;
  std::error_code ec;
  if (std::filesystem::exists(args.list, ec)) {
    auto lists = net::LoadRevocationLists(args.list);
    if (!lists.ok()) return Fail("revoke", lists.status());
    const auto own = std::find_if(lists->begin(), lists->end(), [&](const auto& l) {
      return l.authority == authority->PublicKey();
    });
    if (own == lists->end()) {
      return Fail("revoke", InvalidArgument(args.list + " holds no list of this authority"));
    }
    if (Status s = net::VerifyRevocationList(*own, {authority->PublicKey()}); !s.ok()) {
      return Fail("revoke", Status(s.code(), args.list + ": " + s.message()));
    }
    keys = own->keys;
    serial = own->serial;
    for (auto it = lists->begin(); it != lists->end(); ++it) {
      if (it != own) others.push_back(*it);
    }
  }
  for (const auto& hex : args.keys) {
    auto raw = ParsePublicKey(hex, "a key to revoke");
    if (!raw.ok()) return Fail("revoke", raw.status());
    keys.push_back(*raw);
  }
  for (const auto& path : args.certificates) {
    auto cert = net::LoadCertificate(path);
    if (!cert.ok()) return Fail("revoke", cert.status());
    keys.push_back(cert->public_key);
  }
  if (args.keys.empty() && args.certificates.empty()) {
    return Fail("revoke", InvalidArgument("name a key or a --certificate to revoke"));
  }
  // Newer than the last list, and than any list made before now (a serial is also a time).
  serial = std::max<uint64_t>(serial + 1, static_cast<uint64_t>(net::UnixNow()));
  auto list = net::MakeRevocationList(*authority, serial, std::move(keys));
  if (!list.ok()) return Fail("revoke", list.status());
  others.push_back(*list);
  if (Status s = WriteFileAtomically(args.list, net::RevocationListsJson(others)); !s.ok()) {
    return Fail("revoke", s);
  }
  std::printf("%s: revocation list %llu of authority %s, %zu keys revoked\n", args.list.c_str(),
              static_cast<unsigned long long>(list->serial), authority->PublicHex().c_str(),
              list->keys.size());
  return 0;
}

}  // namespace aiac::spawner
