#include "spawner/map_command.h"

#include <cstdio>
#include <set>

#include "emulation/platform_file.h"
#include "mapping/failure_replay.h"
#include "model/et_model.h"
#include "spawner/mapping_io.h"

namespace aiac::spawner {

namespace {

int BadInput(const Status& s) {
  std::fprintf(stderr, "aiac-spawner map: %s\n", s.message().c_str());
  return 2;
}

}  // namespace

CLI::App* AddMapCommand(CLI::App& app, MapArgs& args) {
  CLI::App* map =
      app.add_subcommand("map", "map a task graph onto a platform and print it as JSON");
  map->add_option("--platform", args.platform,
                  "platform description: JSON, or a platform file (.toml)")
      ->required();
  map->add_option("--tig", args.tig, "task interaction graph (JSON)")->required();
  map->add_option("--algo", args.algo, "maheve (default), default, aiac-qm or f-ec");
  map->add_option("--reserve", args.reserve,
                  "MAHEVE: share of each cluster's free nodes kept for replacements (default 0.1)");
  map->add_option("--fail", args.fail,
                  "a node that fails after the mapping (repeatable, in order)");
  return map;
}

int MapCommand(const MapArgs& args) {
  auto mapper = mapping::MakeMapper(args.algo, args.reserve);
  if (!mapper.ok()) return BadInput(mapper.status());
  // A platform file (platform_file.h) by its extension, else the JSON of mapping_io.h.
  Result<model::Platform> platform = InvalidArgument("no platform");
  if (args.platform.ends_with(".toml")) {
    auto file = emulation::LoadPlatformFile(args.platform);
    if (!file.ok()) return BadInput(file.status());
    platform = file->ToModel();
  } else {
    auto pj = ReadJsonFile(args.platform);
    if (!pj.ok()) return BadInput(pj.status());
    platform = PlatformFromJson(*pj, args.platform);
  }
  if (!platform.ok()) return BadInput(platform.status());
  auto tj = ReadJsonFile(args.tig);
  if (!tj.ok()) return BadInput(tj.status());
  auto tig = TigFromJson(*tj, args.tig);
  if (!tig.ok()) return BadInput(tig.status());
  if (tig->size() > platform->free_count()) {
    return BadInput(InvalidArgument(std::to_string(tig->size()) + " tasks but only " +
                                    std::to_string(platform->free_count()) +
                                    " free nodes (one task per node)"));
  }
  std::vector<int> failing;
  std::set<int> seen;
  for (const auto& id : args.fail) {
    const int node = platform->FindNode(id);
    if (node < 0) return BadInput(InvalidArgument("--fail names unknown node '" + id + "'"));
    if (!seen.insert(node).second)
      return BadInput(InvalidArgument("--fail names node '" + id + "' twice"));
    failing.push_back(node);
  }

  mapping::InitialMapping initial = (*mapper)->Map(*platform, *tig);
  const double et = model::AppTime(*platform, *tig, initial.placement.node_of_task());
  mapping::Placement during = initial.placement;
  auto replacements = mapping::ReplayFailures(*platform, *tig, **mapper, during, failing);
  std::printf(
      "%s\n",
      MappingToJson(*platform, *tig, (*mapper)->name(), initial, et, replacements).dump(2).c_str());
  return 0;
}

}  // namespace aiac::spawner
