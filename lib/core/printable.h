// Text that came from a peer, made safe to put in a log line: at most `max` bytes are shown
// (then "...(N bytes)"), and control characters, quotes, backslashes and bytes outside printable
// ASCII are escaped as \n, \t, \", \\ or \xHH, so a peer can neither forge log lines nor flood
// the log. The result is quoted, unless `quote` is false (for free text such as a peer's error
// message, where quotes and backslashes are then kept as they are).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace aiac {

std::string Printable(std::string_view text, size_t max = 96, bool quote = true);

}  // namespace aiac
