#include "core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/write_all.h"

namespace aiac {

Status WriteFileAtomically(const std::string& path, std::initializer_list<std::string_view> parts,
                           mode_t mode) {
  const std::string pattern = path + ".tmp-XXXXXX";
  std::vector<char> temp(pattern.begin(), pattern.end());
  temp.push_back('\0');
  const int fd = ::mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) return IoError("cannot write " + path + ": " + std::strerror(errno));
  auto fail = [&](int err) {
    ::close(fd);
    std::remove(temp.data());
    return IoError("cannot write " + path + ": " + std::strerror(err));
  };
  if (::fchmod(fd, mode) != 0) return fail(errno);
  for (std::string_view bytes : parts) {
    if (const int err = WriteAll(fd, bytes); err != 0) return fail(err);
  }
  if (::close(fd) != 0) {
    const int err = errno;
    std::remove(temp.data());
    return IoError("cannot write " + path + ": " + std::strerror(err));
  }
  if (std::rename(temp.data(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(temp.data());
    return IoError("cannot rename a new " + path + " into place: " + std::strerror(err));
  }
  return Status::Ok();
}

}  // namespace aiac
