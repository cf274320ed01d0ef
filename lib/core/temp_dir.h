// Temporary directories under $TMPDIR (or /tmp): a fresh one per run, named PREFIX-XXXXXX, and
// one per user kept between runs.
#pragma once

#include <string>

#include "core/status.h"

namespace aiac {

// $TMPDIR, or /tmp when it is unset or empty.
std::string TempRoot();

Result<std::string> MakeTempDir(const std::string& prefix);

// $TMPDIR/aiac-UID: this user's own directory for what is kept between runs (the power local
// runs measured), made with mode 700 when missing. Refused when it is a symlink, not a
// directory, not owned by this user, or open to group or others: in a shared /tmp, someone else
// could have made it first to plant files for us to read or overwrite.
Result<std::string> UserTempDir();

}  // namespace aiac
