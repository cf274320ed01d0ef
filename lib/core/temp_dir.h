// A fresh directory under $TMPDIR (or /tmp), named PREFIX-XXXXXX.
#pragma once

#include <string>

#include "core/status.h"

namespace aiac {

// $TMPDIR, or /tmp when it is unset or empty.
std::string TempRoot();

Result<std::string> MakeTempDir(const std::string& prefix);

}  // namespace aiac
