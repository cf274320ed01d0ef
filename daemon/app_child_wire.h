// Whole Cap'n Proto messages over the socketpair between a daemon and its app's child process
// (app_child.h): written with one sendmsg of the message's segments, so a large array is not
// copied into a buffer first, and never raising SIGPIPE when the other end is gone.
#pragma once

#include <capnp/blob.h>
#include <capnp/message.h>
#include <capnp/serialize.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string_view>

#include "core/status.h"

namespace aiac::daemon {

// `bytes` as a Data field of `message`: a large array that capnp can point at (word-aligned, whole
// words) is referenced, going out as a segment of its own without a copy, so it must outlive the
// send; anything else is copied into the message.
capnp::Orphan<capnp::Data> BytesFor(capnp::MessageBuilder& message, std::string_view bytes);

// An error the other end sent as its message and aiac::StatusCode (kInternal for a code this
// build does not know).
Status ChildError(capnp::Text::Reader message, uint8_t code);

// Writes `message` whole; Unavailable when the other end is gone.
Status SendChildMessage(int fd, capnp::MessageBuilder& message);

// A message read whole, and the words it was read into.
struct ChildMessageIn {
  kj::Array<capnp::word> words;
  kj::Array<kj::ArrayPtr<const capnp::word>> segments;
  std::optional<capnp::SegmentArrayMessageReader> reader;
  template <typename T>
  typename T::Reader root() {
    return reader->getRoot<T>();
  }
};

// The next message. `wait`: how long to wait for it to begin (nullopt: as long as it takes);
// Timeout when none began by then, Unavailable when the other end closed (or sent something
// that does not decode).
Result<std::unique_ptr<ChildMessageIn>> ReceiveChildMessage(
    int fd, std::optional<std::chrono::milliseconds> wait = std::nullopt);

}  // namespace aiac::daemon
