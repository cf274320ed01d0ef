// Files that hold secrets (the cluster key, a plugin-signing key) must be readable by their
// owner only, as ssh insists for its keys.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace aiac {

// NotFound "WHAT PATH does not exist", or InvalidArgument "WHAT PATH is accessible by group or
// others: chmod 600 PATH" when any group or other permission bit is set.
Status CheckPrivateFile(std::string_view what, const std::string& path);

}  // namespace aiac
