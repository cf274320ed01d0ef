// Test helpers every test may use: ASSERT_OK, temporary directories, files, waiting for an
// event with a bound. The real binaries as child processes are in processes.h.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "core/status.h"

#define ASSERT_OK(expr)                              \
  do {                                               \
    const ::aiac::Status aiac_s_ = (expr);           \
    ASSERT_TRUE(aiac_s_.ok()) << aiac_s_.ToString(); \
  } while (0)
#define EXPECT_OK(expr)                              \
  do {                                               \
    const ::aiac::Status aiac_s_ = (expr);           \
    EXPECT_TRUE(aiac_s_.ok()) << aiac_s_.ToString(); \
  } while (0)

namespace aiac::testing {

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string BinPath(const std::string& binary);  // build/bin/<binary>
std::string SourcePath(const std::string& rel);  // <repo>/<rel>
std::string ReadFile(const std::string& path);
void WriteFile(const std::string& path, const std::string& content);
// Polls until `path` exists and is non-empty; returns its content, or "" on timeout.
std::string WaitForFile(const std::string& path,
                        std::chrono::milliseconds timeout = std::chrono::milliseconds(10000));
// Polls `pred` every 20 ms until it holds or `timeout` passes.
bool WaitUntil(const std::function<bool()>& pred,
               std::chrono::milliseconds timeout = std::chrono::milliseconds(10000));

}  // namespace aiac::testing
