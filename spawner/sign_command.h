// `aiac-spawner sign PLUGIN --key K [--out FILE]`: the publisher's signature of an app plugin,
// made once, offline, written beside it as PLUGIN.sig (runtime/plugin_signature.h). Spawners
// ship it with the plugin and need no private key. Prints the key id and the file written.
// Errors exit 2 with one line on stderr.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace aiac::spawner {

struct SignArgs {
  std::string plugin;
  std::string key;
  std::string out;  // default PLUGIN.sig
};

CLI::App* AddSignCommand(CLI::App& app, SignArgs& args);
int SignCommand(const SignArgs& args);

}  // namespace aiac::spawner
