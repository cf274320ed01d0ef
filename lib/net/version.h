// What `--version` prints for each program: its version, the commit it was built from, and the
// versions of what it speaks with others (the wire protocol, the app API).
#pragma once

#include <string>
#include <string_view>

namespace aiac::net {

// "0.1.0": the version a daemon registers with (net/job_status.h shows it in `status`).
std::string_view Version();
// "aiac-daemon 0.1.0 (commit 1a2b3c4d5e6f, protocol 4 down to 3, app API 9)": it speaks
// protocol versions 3 to 4 (net/hello.h).
std::string VersionLine(std::string_view program);

}  // namespace aiac::net
