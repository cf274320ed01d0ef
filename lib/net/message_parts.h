// Messages of any size (docs/user-guide.md). A message whose frame exceeds the frame limit is sent
// as the bytes of that frame in Part envelopes, each a frame of its own of at most PartBytes(),
// in order and before anything else on the connection; the receiver reassembles them into the
// frame and reads it as if it had come whole. So results, snapshots, checkpoints and any other
// message are limited only by max_message_bytes and memory, while every frame on the wire stays
// under max_frame_bytes and a single oversized frame is still refused.
//
// End to end: the first part declares the total size, checked against max_message_bytes and
// the memory this process may use, and reserved from its memory budget, before anything is kept;
// every part must continue where the last ended; the last carries the SHA-256 of the whole frame,
// checked before it is read.
#pragma once

#include <capnp/message.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "core/memory_budget.h"
#include "core/status.h"
#include "net/frame.h"

namespace aiac::net {

// Payload of each part for peers that accept frames of `max_frame_bytes`: half of that (room
// for the envelope), at most 1 MiB.
size_t PartBytes(size_t max_frame_bytes);

// The frame of a message split into the frames of its parts.
std::vector<kj::Array<capnp::word>> SplitIntoParts(kj::ArrayPtr<const capnp::word> frame,
                                                   size_t part_bytes);

class PartAssembler {
 public:
  // Declared totals reserve from `budget` (the process's) when given.
  explicit PartAssembler(FrameLimits limits, MemoryBudget* budget = nullptr);
  ~PartAssembler();
  PartAssembler(const PartAssembler&) = delete;
  PartAssembler& operator=(const PartAssembler&) = delete;

  // Takes the next part: nullptr until the last, then the whole message. An error (out of
  // order, a changed or impossible total, too large, a hash mismatch, a part inside the
  // reassembled message, a malformed frame) leaves the stream unusable: close it.
  Result<std::unique_ptr<IncomingMessage>> Add(proto::Part::Reader part);
  // Whether a message is half received.
  bool busy() const { return total_ > 0; }

 private:
  struct Digest;
  FrameLimits limits_;
  MemoryBudget* budget_;
  MemoryBudget::Reservation reserved_;  // total_ bytes, while the parts come
  kj::Array<capnp::word> words_;
  uint64_t total_ = 0, received_ = 0;
  std::unique_ptr<Digest> digest_;
};

}  // namespace aiac::net
