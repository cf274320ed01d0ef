// The real binaries as child processes, for integration tests: each is killed and reaped when
// its handle goes, also when a test fails.
#pragma once

#include <string>
#include <vector>

#include "spawner/child_process.h"
#include "support/test_support.h"

namespace aiac::testing {

// Starts a binary from build/bin with stdout+stderr going to `log`.
spawner::ChildProcess Start(const std::string& binary, const std::vector<std::string>& args,
                            const std::string& log);

// Pids of running (not zombie) processes whose command line contains `needle` (and `also`).
std::vector<int> ProcessesMatching(const std::string& needle, const std::string& also = "");

// Sends `sig` to `pid` and to every process it started, their children too (a daemon and the
// processes its tasks' apps run in): what starving a host does to them all. False when `pid`
// is gone.
bool SignalTree(int pid, int sig);

}  // namespace aiac::testing
