// The network options every binary reads from its config file.
#pragma once

#include "core/config.h"
#include "net/connection.h"

namespace aiac::net {

// Reads cluster_key, max_frame_bytes and handshake_timeout_ms.
void ReadNetOptions(ConfigFile& file, NetOptions& options);
// A deployment without a key would accept anyone: refuse to start.
Status CheckNetOptions(const NetOptions& options);

}  // namespace aiac::net
