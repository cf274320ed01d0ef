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

}  // namespace aiac::testing
