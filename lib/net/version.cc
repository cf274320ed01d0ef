#include "net/version.h"

#include "aiac_version.h"  // generated at build time (conf/cmake/write_version.cmake)
#include "app/app.h"
#include "net/connection.h"

namespace aiac::net {

std::string_view Version() { return AIAC_VERSION; }

std::string VersionLine(std::string_view program) {
  return std::string(program) + " " + AIAC_VERSION + " (commit " + AIAC_COMMIT + ", protocol " +
         std::to_string(kProtocolVersion) + " down to " + std::to_string(kMinProtocolVersion) +
         ", app API " + std::to_string(app::kApiVersion) + ")";
}

}  // namespace aiac::net
