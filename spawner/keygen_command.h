// `aiac-spawner keygen [--out FILE | --signing PREFIX | --authority PREFIX]`: makes keys.
//   (no option)       prints a fresh cluster key (32 random bytes, 64 hex characters);
//   --out FILE        writes the cluster key to FILE (mode 600) instead, for cluster_key_file;
//   --signing PREFIX  writes an Ed25519 plugin-signing key pair: PREFIX.key (PEM, mode 600, for
//                     the spawner's sign_with) and PREFIX.pub (the public key in hex, for
//                     daemons' trusted_keys), and prints the public key;
//   --authority PREFIX  the same for a deployment authority: PREFIX.key (kept offline) certifies
//                     nodes (`certify`), PREFIX.pub goes to every process's authority_keys.
// Never overwrites a file. Errors exit 2 with one line on stderr.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace aiac::spawner {

struct KeygenArgs {
  std::string out;
  std::string signing;
  std::string authority;
};

CLI::App* AddKeygenCommand(CLI::App& app, KeygenArgs& args);
int KeygenCommand(const KeygenArgs& args);

}  // namespace aiac::spawner
