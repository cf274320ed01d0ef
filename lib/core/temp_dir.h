// A fresh directory under $TMPDIR (or /tmp), named PREFIX-XXXXXX.
#pragma once

#include <string>

#include "core/status.h"

namespace aiac {

Result<std::string> MakeTempDir(const std::string& prefix);

}  // namespace aiac
