#include "core/private_file.h"

#include <sys/stat.h>

namespace aiac {

Status CheckPrivateFile(std::string_view what, const std::string& path) {
  const std::string named = std::string(what) + " " + path;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return NotFound(named + " does not exist");
  if ((st.st_mode & 077) != 0) {
    return InvalidArgument(named + " is accessible by group or others: chmod 600 " + path);
  }
  return Status::Ok();
}

}  // namespace aiac
