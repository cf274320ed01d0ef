// SHA-256 (OpenSSL): what plugins, task data, moved items and checkpoints are named and checked
// by.
#pragma once

#include <string>
#include <string_view>

namespace aiac {

// The 32 raw bytes of the SHA-256 of `bytes`.
std::string Sha256(std::string_view bytes);

}  // namespace aiac
