#include "support/test_support.h"

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

}  // namespace aiac::testing
