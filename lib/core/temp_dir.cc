#include "core/temp_dir.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
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

Result<std::string> UserTempDir() {
  const std::string dir = TempRoot() + "/aiac-" + std::to_string(::geteuid());
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return IoError("cannot create " + dir + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0)
    return IoError("cannot read " + dir + ": " + std::strerror(errno));
  if (!S_ISDIR(st.st_mode))
    return Unauthenticated(dir + " is not a directory (a planted symlink?)");
  if (st.st_uid != ::geteuid()) {
    return Unauthenticated(dir + " belongs to user " + std::to_string(st.st_uid) +
                           ", not to this one");
  }
  if ((st.st_mode & 077) != 0) {
    return Unauthenticated(dir + " is open to group or others: chmod 700 " + dir);
  }
  return dir;
}

}  // namespace aiac
