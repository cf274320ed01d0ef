#include "support/processes.h"

#include <signal.h>

#include <filesystem>
#include <fstream>

namespace aiac::testing {

spawner::ChildProcess Start(const std::string& binary, const std::vector<std::string>& args,
                            const std::string& log) {
  std::vector<std::string> argv{BinPath(binary)};
  argv.insert(argv.end(), args.begin(), args.end());
  auto child = spawner::ChildProcess::Spawn(argv, log);
  AIAC_CHECK(child.ok());
  return std::move(*child);
}

std::vector<int> ProcessesMatching(const std::string& needle, const std::string& also) {
  std::vector<int> pids;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string stat = ReadFile(entry.path().string() + "/stat");
    auto close = stat.rfind(')');
    if (close == std::string::npos || close + 2 >= stat.size() || stat[close + 2] == 'Z') continue;
    std::string cmdline = ReadFile(entry.path().string() + "/cmdline");
    for (char& c : cmdline)
      if (c == '\0') c = ' ';
    if (cmdline.find(needle) != std::string::npos && cmdline.find(also) != std::string::npos) {
      pids.push_back(std::stoi(name));
    }
  }
  return pids;
}

bool SignalTree(int pid, int sig) {
  if (kill(pid, sig) != 0) return false;
  // A process's children, by each of its threads (the one that started them).
  std::error_code ec;
  for (const auto& task :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::ifstream children(task.path() / "children");
    int child = 0;
    while (children >> child) SignalTree(child, sig);
  }
  return true;
}

}  // namespace aiac::testing
