// Where aiac-emulate keeps what it needs to find an emulated platform again, once `up` has
// returned: /run/aiac-emulate/<platform>/ holds a copy of the platform file and state.json
// (the host's core count and the address slot the plan was made for, the CPU controller, the
// switch's pid). `exec`,
// `status` and `down` read it; `down` also finds what a crashed `up` left without it.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "core/status.h"
#include "emulate/host_setup.h"
#include "emulation/os_platform.h"
#include "emulation/platform_file.h"

namespace aiac::emulate {

inline constexpr const char* kStateRoot = "/run/aiac-emulate";
// The links' emulation, as every result names it.
inline constexpr const char* kLinkMode = "user-space switch (TUN)";

struct PlatformState {
  std::string dir;  // /run/aiac-emulate/<platform>
  emulation::PlatformFile file;
  emulation::OsPlatform plan;
  int host_cores = 1;
  CpuController cpu = CpuController::kV1;
  pid_t switch_pid = 0;
  std::vector<pid_t> load_pids;  // background load, one process per loaded node
};

std::string StateDir(const std::string& platform);

// Writes the copy of the platform file (once) and state.json.
Status SaveState(const PlatformState& state, const std::string& platform_text);

// Reads the state of the platform `name`; NotFound when it is not up.
Result<PlatformState> LoadState(const std::string& name);

// The names of the platforms that are up (a folder under kStateRoot each).
std::vector<std::string> PlatformsUp();

// The platform `name`, or the only one up when `name` is empty; a clear error otherwise.
Result<PlatformState> PickPlatform(const std::string& name);

}  // namespace aiac::emulate
