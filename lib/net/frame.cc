#include "net/frame.h"

#include <kj/exception.h>

#include <cstring>
#include <string>

namespace aiac::net {
namespace {

capnp::ReaderOptions ReaderOptionsFor(const FrameLimits& limits, size_t words) {
  capnp::ReaderOptions options;
  // Traversal limit: each word of the frame may be read a few times (far pointers, lists of
  // structs), never more; this blocks amplification attacks on small frames.
  options.traversalLimitInWords = words * 4 + 1024;
  options.nestingLimit = limits.nesting_limit;
  return options;
}

uint32_t ReadU32(const std::byte* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;  // capnp framing is little-endian; every platform we build for is too
}

}  // namespace

IncomingMessage::IncomingMessage(kj::Array<capnp::word> words, const FrameLimits& limits)
    : words_(std::move(words)), reader_(words_, ReaderOptionsFor(limits, words_.size())) {}

Status IncomingMessage::CheckWellFormed() {
  try {
    auto root = reader_.getRoot<proto::Envelope>();
    (void)root.totalSize();  // visits every pointer
    (void)root.which();
    return Status::Ok();
  } catch (const kj::Exception& e) {
    return ProtocolError(std::string("malformed frame: ") + e.getDescription().cStr());
  }
}

void FrameParser::Feed(std::span<const std::byte> bytes) {
  if (start_ > 0 && start_ == buffer_.size()) {
    buffer_.clear();
    start_ = 0;
  }
  buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
}

Result<std::unique_ptr<IncomingMessage>> FrameParser::Next() {
  const size_t avail = buffered();
  const std::byte* p = buffer_.data() + start_;
  if (avail < 4) return std::unique_ptr<IncomingMessage>();
  const uint64_t segments = uint64_t{ReadU32(p)} + 1;
  if (segments > limits_.max_segments) {
    return ProtocolError("frame declares " + std::to_string(segments) + " segments (limit " +
                         std::to_string(limits_.max_segments) + ")");
  }
  // Header: 4 bytes count + 4 per segment, padded to a multiple of 8.
  const size_t header = ((4 + 4 * segments) + 7) / 8 * 8;
  if (avail < 4 + 4 * segments) return std::unique_ptr<IncomingMessage>();
  uint64_t body_words = 0;
  for (uint64_t i = 0; i < segments; ++i) body_words += ReadU32(p + 4 + 4 * i);
  const uint64_t total = header + body_words * 8;
  if (total > limits_.max_frame_bytes) {
    return ResourceExhausted("frame of " + std::to_string(total) + " bytes exceeds the limit of " +
                             std::to_string(limits_.max_frame_bytes));
  }
  if (avail < total) {
    if (total > kUnbudgetedFrameBytes && reserved_.bytes() == 0) {
      AIAC_ASSIGN_OR_RETURN(
          reserved_, ReserveFrom(budget_, "a frame of " + std::to_string(total) + " bytes", total));
    }
    return std::unique_ptr<IncomingMessage>();
  }
  auto words = kj::heapArray<capnp::word>(total / 8);
  std::memcpy(words.begin(), p, total);
  start_ += total;
  reserved_.Release();
  if (start_ == buffer_.size()) {
    buffer_.clear();
    start_ = 0;
    if (buffer_.capacity() > (1u << 20)) std::vector<std::byte>().swap(buffer_);
  } else if (start_ > (1u << 20) && start_ * 2 > buffer_.size()) {
    buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(start_));
    start_ = 0;
  }
  try {
    return std::make_unique<IncomingMessage>(std::move(words), limits_);
  } catch (const kj::Exception& e) {
    return ProtocolError(std::string("malformed frame: ") + e.getDescription().cStr());
  }
}

Result<std::unique_ptr<IncomingMessage>> ParseFrame(kj::Array<capnp::word> words,
                                                    const FrameLimits& limits) {
  const auto* p = reinterpret_cast<const std::byte*>(words.begin());
  const size_t size = words.size() * sizeof(capnp::word);
  if (size < 8) return ProtocolError("a frame of " + std::to_string(size) + " bytes");
  const uint64_t segments = uint64_t{ReadU32(p)} + 1;
  if (segments > limits.max_segments) {
    return ProtocolError("frame declares " + std::to_string(segments) + " segments (limit " +
                         std::to_string(limits.max_segments) + ")");
  }
  const size_t header = ((4 + 4 * segments) + 7) / 8 * 8;
  if (header > size) return ProtocolError("frame's segment table is larger than the frame");
  uint64_t body_words = 0;
  for (uint64_t i = 0; i < segments; ++i) body_words += ReadU32(p + 4 + 4 * i);
  if (header + body_words * 8 != size) {
    return ProtocolError("frame declares " + std::to_string(header + body_words * 8) +
                         " bytes but has " + std::to_string(size));
  }
  try {
    return std::make_unique<IncomingMessage>(std::move(words), limits);
  } catch (const kj::Exception& e) {
    return ProtocolError(std::string("malformed frame: ") + e.getDescription().cStr());
  }
}

kj::Array<capnp::word> EncodeFrame(capnp::MessageBuilder& message) {
  return capnp::messageToFlatArray(message);
}

}  // namespace aiac::net
