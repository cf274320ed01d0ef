#include "core/self_directory.h"

#include <filesystem>

namespace aiac {

std::string SelfDirectory() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

}  // namespace aiac
