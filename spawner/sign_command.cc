#include "spawner/sign_command.h"

#include <cstdio>
#include <filesystem>

#include "core/atomic_file.h"
#include "core/read_file.h"
#include "core/sha256.h"
#include "runtime/code_signing.h"
#include "runtime/plugin.h"
#include "runtime/plugin_signature.h"

namespace aiac::spawner {

namespace {

Status Sign(const SignArgs& args, std::string& written, std::string& key_id) {
  AIAC_ASSIGN_OR_RETURN(const runtime::SigningKey key, runtime::SigningKey::Load(args.key));
  AIAC_ASSIGN_OR_RETURN(const std::string bytes, ReadWholeFile(args.plugin));
  // Only what a daemon would load is worth signing: the plugin is loaded here first (its factory
  // and API version checked), so a wrong file is refused now rather than on every daemon.
  AIAC_RETURN_IF_ERROR(runtime::Plugin::Load(std::filesystem::absolute(args.plugin)).status());
  const runtime::PluginSignature signature = runtime::SignPluginHash(key, Sha256(bytes));
  key_id = runtime::KeyId(signature.public_key);
  written = args.out.empty() ? runtime::SignaturePathFor(args.plugin) : args.out;
  return WriteFileAtomically(
      written,
      runtime::FormatSignature(signature, std::filesystem::path(args.plugin).filename().string()));
}

}  // namespace

CLI::App* AddSignCommand(CLI::App& app, SignArgs& args) {
  CLI::App* cmd = app.add_subcommand(
      "sign", "sign an app plugin with the publisher's key: PLUGIN.sig, shipped with it");
  cmd->add_option("plugin", args.plugin, "the plugin file (lib*.so)")->required();
  cmd->add_option("--key", args.key, "the publisher's signing key (keygen --signing PREFIX)")
      ->required();
  cmd->add_option("--out", args.out, "where to write the signature (default PLUGIN.sig)");
  return cmd;
}

int SignCommand(const SignArgs& args) {
  std::string written, key_id;
  if (Status s = Sign(args, written, key_id); !s.ok()) {
    std::fprintf(stderr, "aiac-spawner: sign: %s\n", s.message().c_str());
    return 2;
  }
  std::printf("signed %s with key %s: %s\n", args.plugin.c_str(), key_id.c_str(), written.c_str());
  return 0;
}

}  // namespace aiac::spawner
