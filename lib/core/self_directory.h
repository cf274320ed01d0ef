// Where the running program lives, to find the programs installed beside it.
#pragma once

#include <string>

namespace aiac {

// The directory holding the running executable (/proc/self/exe); "." when it cannot be read.
std::string SelfDirectory();

}  // namespace aiac
