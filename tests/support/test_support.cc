#include "support/test_support.h"

#include <dirent.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/temp_dir.h"

namespace aiac::testing {

TempDir::TempDir() {
  auto dir = MakeTempDir("aiac-test");
  AIAC_CHECK(dir.ok());
  path_ = std::move(*dir);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string BinPath(const std::string& binary) { return std::string(AIAC_BIN_DIR) + "/" + binary; }
std::string SourcePath(const std::string& rel) { return std::string(AIAC_SOURCE_DIR) + "/" + rel; }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteFile(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::trunc);
  out << content;
}

bool WaitUntil(const std::function<bool()>& pred, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return pred();
}

std::string WaitForFile(const std::string& path, std::chrono::milliseconds timeout) {
  std::string content;
  WaitUntil([&] { return !(content = ReadFile(path)).empty(); }, timeout);
  return content;
}

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

}  // namespace aiac::testing
