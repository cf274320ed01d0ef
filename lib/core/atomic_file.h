// Writing a file atomically and safely: the bytes go to a fresh file made next to the target
// with mkstemp (O_CREAT | O_EXCL: never through a symlink planted under a guessable name, never
// into a file someone else made), then renamed over the target, so a reader sees the old file or
// the whole new one, never half a line. Used for ready files ("HOST:PORT"), stored plugins, the
// power cache and the CG app's matrix cache.
#pragma once

#include <sys/types.h>

#include <initializer_list>
#include <string>
#include <string_view>

#include "core/status.h"

namespace aiac {

// Writes the concatenation of `parts` to `path` with permissions `mode`. On failure nothing is
// left behind but the old file, and the error names the path and the reason.
Status WriteFileAtomically(const std::string& path, std::initializer_list<std::string_view> parts,
                           mode_t mode = 0644);
inline Status WriteFileAtomically(const std::string& path, std::string_view content,
                                  mode_t mode = 0644) {
  return WriteFileAtomically(path, {content}, mode);
}

}  // namespace aiac
