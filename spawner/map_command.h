// `aiac-spawner map --platform P.json --tig T.json [--algo A] [--reserve R] [--fail NODE]...`:
// the initial mapping, its predicted ET(App) and the replacement chosen for each failed node,
// as JSON on stdout. Bad input exits 2 with one line on stderr.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace aiac::spawner {

struct MapArgs {
  std::string platform;
  std::string tig;
  std::string algo = "maheve";
  double reserve = 0.1;
  std::vector<std::string> fail;
};

CLI::App* AddMapCommand(CLI::App& app, MapArgs& args);
int MapCommand(const MapArgs& args);

}  // namespace aiac::spawner
