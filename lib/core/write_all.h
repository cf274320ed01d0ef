// Writing a whole buffer to a file descriptor: the cluster's key files, checkpoint states kept in
// files, the CG app's matrix cache.
#pragma once

#include <string_view>

namespace aiac {

// Writes every byte of `bytes` to `fd` from its current offset, at most 1 MiB per call (one
// write of a large array held in transparent huge pages copied at a tenth of the speed on our
// VM: 0.32-0.42 s for 166 MB, against 0.03 s in 1 MiB pieces), retrying after EINTR. Returns 0,
// or the errno of the failed write (EIO when a write wrote nothing).
int WriteAll(int fd, std::string_view bytes);

}  // namespace aiac
