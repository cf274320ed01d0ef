// What a deployment's authority does, offline, with its key (`aiac-spawner keygen --authority
// PREFIX` makes it; docs/security.md):
//
// `aiac-spawner certify --authority-key K --role ROLE --id ID (PUBKEY --out FILE | --new-key
//  PREFIX) [--days N] [--enroller]`: certifies a node (net/certificate.h).
//   PUBKEY           the node's public key (64 hex), as its process printed it when it made its
//                    identity key at first start: the private key never leaves the node;
//   --out FILE       where the certificate goes (the node's certificate_file);
//   --new-key PREFIX makes the node's key pair here instead, PREFIX.key (mode 600) with the
//                    certificate in PREFIX.cert, to be handed to the node whole;
//   --days N         validity, default 365;
//   --enroller       (super-node) it may certify daemons that enroll with a token.
//   Prints the certificate's id, role, key and validity.
//
// `aiac-spawner enroll-token --authority-key K --supernode SN (--id ID | --count N [--prefix
//  P]) [--days N] [--token-days T]`: one-time enrollment tokens (net/enrollment_token.h) that
//  enroller super-node SN redeems for daemon certificates of N days (default 365); each token
//  expires after T days (default 7). Prints "ID TOKEN" per line; with --count, the ids are P
//  (default "d-") followed by 8 random hex digits.
//
// `aiac-spawner revoke --authority-key K --list FILE (KEY | --certificate CERT)...`: adds keys
//  (64 hex each, or the key a certificate file names) to the authority's revocation list FILE
//  (net/revocation.h), made when missing, re-signed with a higher serial. Put the file where a
//  super-node's revocation_file points: the super-nodes pass it on to everyone.
//
// Never overwrites a certificate or key file. Errors exit 2 with one line on stderr.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace aiac::spawner {

struct CertifyArgs {
  std::string authority_key;
  std::string role;
  std::string id;
  std::string public_key;
  std::string new_key;
  std::string out;
  int days = 365;
  bool enroller = false;
};

struct EnrollTokenArgs {
  std::string authority_key;
  std::string supernode;
  std::string id;
  int count = 0;
  std::string prefix = "d-";
  int days = 365;
  int token_days = 7;
};

struct RevokeArgs {
  std::string authority_key;
  std::string list;
  std::vector<std::string> keys;
  std::vector<std::string> certificates;
};

CLI::App* AddCertifyCommand(CLI::App& app, CertifyArgs& args);
int CertifyCommand(const CertifyArgs& args);
CLI::App* AddEnrollTokenCommand(CLI::App& app, EnrollTokenArgs& args);
int EnrollTokenCommand(const EnrollTokenArgs& args);
CLI::App* AddRevokeCommand(CLI::App& app, RevokeArgs& args);
int RevokeCommand(const RevokeArgs& args);

}  // namespace aiac::spawner
