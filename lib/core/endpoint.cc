#include "core/endpoint.h"

#include <charconv>

namespace aiac {

Result<Endpoint> ParseEndpoint(std::string_view text) {
  auto bad = [&](const char* why) {
    return InvalidArgument("bad endpoint '" + std::string(text) + "': " + why +
                           " (expected HOST:PORT)");
  };
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return bad("no port");
  std::string_view host = text.substr(0, colon);
  std::string_view port = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty()) return bad("empty host");
  unsigned value = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value > 65535) {
    return bad("port is not a number in 0..65535");
  }
  return Endpoint{std::string(host), static_cast<uint16_t>(value)};
}

}  // namespace aiac
