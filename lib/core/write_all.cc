#include "core/write_all.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>

namespace aiac {

int WriteAll(int fd, std::string_view bytes) {
  constexpr size_t kPiece = 1 << 20;
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), std::min(bytes.size(), kPiece));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return 0;
}

}  // namespace aiac
