// Cap'n Proto standard stream framing, incrementally: bytes go in as they arrive from a socket
// (any split, any number of frames per read), whole frames come out.
//
// Frame layout (capnp encoding spec): u32 segment count - 1, u32 size in words of each segment,
// padding to 8 bytes, then the segments. The parser checks the segment table against the
// configured caps before buffering a body, so an oversized or garbage header is refused after
// at most a few bytes, and a large frame reserves its size from the process's memory budget
// before its body is buffered. Its buffer is given back once a large frame is through, so a
// connection that once received one does not keep its size for ever. Not thread-safe; one parser
// per connection.
#pragma once

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/array.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/memory_budget.h"
#include "core/status.h"
#include "proto/aiac.capnp.h"

namespace aiac::net {

struct FrameLimits {
  // Largest frame accepted, header included. Default: 64 MiB.
  size_t max_frame_bytes = 64u << 20;
  // Most segments in one frame. Default: 512.
  uint32_t max_segments = 512;
  // Largest message reassembled from parts (a message whose frame exceeds max_frame_bytes,
  // message_parts.h); also bounded by the memory this process may use. Default: 16 GiB.
  uint64_t max_message_bytes = uint64_t{16} << 30;
  // Nesting limit for pointers. Default: 64. (The traversal limit is not an option: it is four
  // times the frame's own size, see frame.cc.)
  int nesting_limit = 64;
};

// One received message: owns its words and the reader over them. Not copyable or movable
// (the reader points into the words); pass it as a unique_ptr.
class IncomingMessage {
 public:
  IncomingMessage(kj::Array<capnp::word> words, const FrameLimits& limits);
  IncomingMessage(const IncomingMessage&) = delete;
  IncomingMessage& operator=(const IncomingMessage&) = delete;

  // The envelope; throws kj::Exception when the message is malformed (see CheckWellFormed).
  proto::Envelope::Reader root() { return reader_.getRoot<proto::Envelope>(); }
  // Walks the whole message once, so that later reads cannot fail on a bad pointer.
  Status CheckWellFormed();
  size_t size_bytes() const { return words_.size() * sizeof(capnp::word); }

 private:
  kj::Array<capnp::word> words_;
  capnp::FlatArrayMessageReader reader_;
};

class FrameParser {
 public:
  // Frames larger than kUnbudgetedFrameBytes reserve their size from `budget` (the process's)
  // while they are read, when given.
  explicit FrameParser(FrameLimits limits = {}, MemoryBudget* budget = nullptr)
      : limits_(limits), budget_(budget) {}
  static constexpr size_t kUnbudgetedFrameBytes = 64 * 1024;

  // Replaces the caps for the frames still to come (raised once a peer is authenticated).
  void set_limits(const FrameLimits& limits) { limits_ = limits; }
  // Appends received bytes.
  void Feed(std::span<const std::byte> bytes);
  // The next complete frame, nullptr when more bytes are needed, or an error (oversized,
  // bad segment table): after an error the stream cannot be resynchronised; close it.
  Result<std::unique_ptr<IncomingMessage>> Next();
  // Bytes held that do not form a whole frame yet.
  size_t buffered() const { return buffer_.size() - start_; }

 private:
  FrameLimits limits_;
  MemoryBudget* budget_;
  MemoryBudget::Reservation reserved_;  // the frame being read, when it is a large one
  std::vector<std::byte> buffer_;
  size_t start_ = 0;
};

// A whole frame already in memory (reassembled from parts): its segment table checked against
// its size and `limits` (max_frame_bytes is not applied: the caller bounded the size).
Result<std::unique_ptr<IncomingMessage>> ParseFrame(kj::Array<capnp::word> words,
                                                    const FrameLimits& limits);

// Encodes a built message as one frame.
kj::Array<capnp::word> EncodeFrame(capnp::MessageBuilder& message);

}  // namespace aiac::net
