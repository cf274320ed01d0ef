// What the fuzz targets share: the bytes a peer sent, cut into frames by the real parser with
// the real limits, each frame walked once (as Connection::Receive does) before use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

#include "net/frame.h"

namespace aiac::fuzz {

// Feeds `data` to a FrameParser in two pieces (the first byte picks where it is cut) and calls
// `use` with every well-formed message; stops at the first parser error, as a connection would.
inline void ForEachMessage(const uint8_t* data, size_t size,
                           const std::function<void(proto::Envelope::Reader)>& use) {
  net::FrameLimits limits;
  limits.max_frame_bytes = 1 << 20;
  net::FrameParser parser(limits);
  const size_t cut = size == 0 ? 0 : data[0] % (size + 1);
  auto bytes = std::as_bytes(std::span<const uint8_t>(data, size));
  for (auto piece : {bytes.subspan(0, cut), bytes.subspan(cut)}) {
    parser.Feed(piece);
    for (;;) {
      auto next = parser.Next();
      if (!next.ok()) return;
      if (!*next) break;
      if (!(*next)->CheckWellFormed().ok()) return;
      use((*next)->root());
    }
  }
}

}  // namespace aiac::fuzz
