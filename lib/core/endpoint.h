// HOST:PORT endpoints as written in configs and on command lines.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace aiac {

struct Endpoint {
  std::string host;
  uint16_t port = 0;

  std::string ToString() const { return host + ":" + std::to_string(port); }
  friend bool operator==(const Endpoint&, const Endpoint&) = default;
};

// Parses "HOST:PORT" (port 0 allowed: "pick a free one"). "[::1]:80" is accepted for IPv6.
Result<Endpoint> ParseEndpoint(std::string_view text);

}  // namespace aiac
