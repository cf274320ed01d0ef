// Reading a whole file into memory: plugins, checkpoint states kept in files.
#pragma once

#include <string>

#include "core/status.h"

namespace aiac {

// The file's bytes. NotFound ("cannot read PATH") when it cannot be opened, IoError naming the
// system's reason when reading fails part-way (a partial file is never returned).
Result<std::string> ReadWholeFile(const std::string& path);

}  // namespace aiac
