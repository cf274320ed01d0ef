#include "core/temp_dir.h"

#include <stdlib.h>

#include <vector>

namespace aiac {

std::string TempRoot() {
  const char* tmp = getenv("TMPDIR");
  return tmp && *tmp ? tmp : "/tmp";
}

Result<std::string> MakeTempDir(const std::string& prefix) {
  const std::string pattern = TempRoot() + "/" + prefix + "-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) return IoError("cannot create a temporary directory from " + pattern);
  return std::string(buf.data());
}

}  // namespace aiac
