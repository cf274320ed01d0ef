#include "emulate/platform_state.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/read_file.h"

namespace aiac::emulate {

namespace fs = std::filesystem;

std::string StateDir(const std::string& platform) {
  return std::string(kStateRoot) + "/" + platform;
}

Status SaveState(const PlatformState& state, const std::string& platform_text) {
  std::error_code ec;
  fs::create_directories(state.dir, ec);
  if (ec) return IoError("cannot make " + state.dir + ": " + ec.message());
  if (!platform_text.empty())
    AIAC_RETURN_IF_ERROR(WriteFileAtomically(state.dir + "/platform.toml", platform_text));
  nlohmann::json j = {{"host_cores", state.host_cores},
                      {"slot", state.plan.slot},
                      {"cpu", state.cpu == CpuController::kV2 ? "v2" : "v1"},
                      {"links", kLinkMode},
                      {"switch_pid", state.switch_pid},
                      {"load_pids", state.load_pids}};
  return WriteFileAtomically(state.dir + "/state.json", j.dump(2) + "\n");
}

Result<PlatformState> LoadState(const std::string& name) {
  PlatformState state;
  state.dir = StateDir(name);
  int slot = 0;
  if (!fs::exists(state.dir + "/state.json"))
    return NotFound("platform '" + name + "' is not up (no " + state.dir + "/state.json)");
  AIAC_ASSIGN_OR_RETURN(state.file, emulation::LoadPlatformFile(state.dir + "/platform.toml"));
  AIAC_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(state.dir + "/state.json"));
  try {
    const auto j = nlohmann::json::parse(text);
    state.host_cores = j.at("host_cores").get<int>();
    slot = j.at("slot").get<int>();
    state.cpu = j.at("cpu").get<std::string>() == "v2" ? CpuController::kV2 : CpuController::kV1;
    state.switch_pid = j.at("switch_pid").get<pid_t>();
    state.load_pids = j.value("load_pids", std::vector<pid_t>{});
  } catch (const nlohmann::json::exception& e) {
    return Corruption(state.dir + "/state.json: " + e.what());
  }
  AIAC_ASSIGN_OR_RETURN(state.plan, emulation::PlanOsPlatform(state.file, state.host_cores, slot));
  return state;
}

std::vector<std::string> PlatformsUp() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(kStateRoot, ec)) {
    if (fs::exists(entry.path() / "state.json")) names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

Result<PlatformState> PickPlatform(const std::string& name) {
  if (!name.empty()) return LoadState(name);
  const std::vector<std::string> up = PlatformsUp();
  if (up.empty()) return NotFound("no emulated platform is up (`aiac-emulate up P.toml` first)");
  if (up.size() > 1) {
    std::string list;
    for (const auto& n : up) list += (list.empty() ? "" : ", ") + n;
    return InvalidArgument("several platforms are up (" + list + "): say which with --platform");
  }
  return LoadState(up.front());
}

}  // namespace aiac::emulate
