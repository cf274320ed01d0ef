// Writing a small file atomically (write to a temporary name, then rename), so a process that
// polls for it never reads half a line. Used for "HOST:PORT" ready files.
#pragma once

#include <string>

#include "core/status.h"

namespace aiac {

Status WriteFileAtomically(const std::string& path, const std::string& content);

}  // namespace aiac
