#include "daemon/app_child_wire.h"

#include <capnp/serialize.h>
#include <kj/io.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

namespace aiac::daemon {

namespace {

// A kj stream over a socket that gathers a message's pieces into sendmsg calls.
class SocketOutput final : public kj::OutputStream {
 public:
  explicit SocketOutput(int fd) : fd_(fd) {}
  void write(const void* buffer, size_t size) override {
    const kj::ArrayPtr<const kj::byte> piece(static_cast<const kj::byte*>(buffer), size);
    write(kj::arrayPtr(&piece, 1));
  }
  void write(kj::ArrayPtr<const kj::ArrayPtr<const kj::byte>> pieces) override {
    std::vector<iovec> iov;
    iov.reserve(pieces.size());
    for (const auto& p : pieces) {
      if (p.size() > 0) iov.push_back({const_cast<kj::byte*>(p.begin()), p.size()});
    }
    size_t first = 0;
    while (first < iov.size()) {
      msghdr msg{};
      msg.msg_iov = iov.data() + first;
      msg.msg_iovlen = std::min<size_t>(iov.size() - first, IOV_MAX);
      const ssize_t n = ::sendmsg(fd_, &msg, MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR) continue;
        failed_ = true;
        return;
      }
      // Skip what went out; a piece sent in part goes on from where it stopped.
      size_t sent = static_cast<size_t>(n);
      while (sent > 0 && first < iov.size()) {
        if (sent >= iov[first].iov_len) {
          sent -= iov[first].iov_len;
          ++first;
        } else {
          iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + sent;
          iov[first].iov_len -= sent;
          sent = 0;
        }
      }
    }
  }
  bool failed() const { return failed_; }

 private:
  int fd_;
  bool failed_ = false;
};

// Reads exactly `size` bytes; false at the end of the stream or on an error.
bool ReadFully(int fd, void* buffer, size_t size) {
  auto* at = static_cast<char*>(buffer);
  while (size > 0) {
    const ssize_t n = ::read(fd, at, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    at += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// The framing of a message (the standard one: segment count - 1, the segments' sizes in words,
// padding to a word, the segments), read in two steps: its first two words name the segment
// count and the first size, then the rest of the table (FrameTableRest bytes) gives the others.
// Unavailable for a count or a total that no message of ours has.
Result<uint32_t> FrameSegments(const uint32_t (&head)[2]) {
  const uint64_t segments = uint64_t{head[0]} + 1;
  if (segments > 512) return Unavailable("a message of " + std::to_string(segments) + " segments");
  return static_cast<uint32_t>(segments);
}

size_t FrameTableRest(uint32_t segments) {
  const size_t table_words = (segments / 2) + 1;  // incl. the count: 4 + 4 * segments bytes, padded
  return (table_words * 2 - 2) * sizeof(uint32_t);
}

size_t FrameWords(const std::vector<uint32_t>& sizes) {
  size_t words = 0;
  for (uint32_t s : sizes) words += s;
  return words;
}

Result<std::vector<uint32_t>> FrameSizes(const uint32_t (&head)[2],
                                         const std::vector<uint32_t>& rest) {
  AIAC_ASSIGN_OR_RETURN(const uint32_t segments, FrameSegments(head));
  std::vector<uint32_t> sizes(segments);
  sizes[0] = head[1];
  for (uint32_t i = 1; i < segments; ++i) sizes[i] = rest.at(i - 1);
  const uint64_t words = FrameWords(sizes);
  if (words > (uint64_t{1} << 31))
    return Unavailable("a message of " + std::to_string(words) + " words");
  return sizes;
}

// The message whose segments, of `sizes`, were read into `words`; decoded in place.
std::unique_ptr<ChildMessageIn> DecodeChildMessage(kj::Array<capnp::word> words,
                                                   const std::vector<uint32_t>& sizes) {
  auto message = std::make_unique<ChildMessageIn>();
  message->words = std::move(words);
  message->segments = kj::heapArray<kj::ArrayPtr<const capnp::word>>(sizes.size());
  const capnp::word* at = message->words.begin();
  for (size_t i = 0; i < sizes.size(); ++i) {
    message->segments[i] = kj::arrayPtr(at, sizes[i]);
    at += sizes[i];
  }
  // States and slices of large blocks: far above the default traversal limit (64 MiB).
  capnp::ReaderOptions options;
  options.traversalLimitInWords = message->words.size() + 1024;
  message->reader.emplace(message->segments.asPtr(), options);
  return message;
}

}  // namespace

capnp::Orphan<capnp::Data> BytesFor(capnp::MessageBuilder& message, std::string_view bytes) {
  const capnp::Data::Reader data(reinterpret_cast<const kj::byte*>(bytes.data()), bytes.size());
  const bool whole_words = bytes.size() % sizeof(capnp::word) == 0 &&
                           reinterpret_cast<uintptr_t>(bytes.data()) % alignof(capnp::word) == 0;
  if (whole_words && bytes.size() >= 64 * 1024) {
    return message.getOrphanage().referenceExternalData(data);
  }
  return message.getOrphanage().newOrphanCopy(data);
}

Status ChildError(capnp::Text::Reader message, uint8_t code) {
  return Status(code > 0 && code <= static_cast<uint8_t>(StatusCode::kDiverged)
                    ? static_cast<StatusCode>(code)
                    : StatusCode::kInternal,
                message.cStr());
}

Status SendChildMessage(int fd, capnp::MessageBuilder& message) {
  SocketOutput out(fd);
  capnp::writeMessage(out, message);
  if (out.failed())
    return Unavailable(std::string("the other end is gone: ") + std::strerror(errno));
  return Status::Ok();
}

ChildMessageReader::ChildMessageReader() : buffer_(kj::heapArray<capnp::word>(kBufferWords)) {}

kj::ArrayPtr<kj::byte> ChildMessageReader::Space() {
  auto* base = reinterpret_cast<kj::byte*>(buffer_.begin());
  if (large_.size() > 0) {
    auto* words = reinterpret_cast<kj::byte*>(large_.begin());
    return {words + large_filled_, large_.size() * sizeof(capnp::word) - large_filled_};
  }
  const size_t capacity = buffer_.size() * sizeof(capnp::word);
  if (begin_ == end_) {
    begin_ = end_ = 0;
  } else if (end_ == capacity) {
    // Move what is left of the last message to the front (a message that does not fit went to
    // large_, so there is room after it).
    std::memmove(base, base + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  return {base + end_, capacity - end_};
}

void ChildMessageReader::Filled(size_t bytes) {
  if (large_.size() > 0) {
    large_filled_ += bytes;
  } else {
    end_ += bytes;
  }
}

std::unique_ptr<ChildMessageIn> ChildMessageReader::Next() {
  if (!status_.ok()) return nullptr;
  if (large_.size() > 0) {
    if (large_filled_ < large_.size() * sizeof(capnp::word)) return nullptr;
    large_filled_ = 0;
    return DecodeChildMessage(std::move(large_), large_sizes_);
  }
  // Messages are whole words, so begin_ stays word-aligned.
  const auto* at = reinterpret_cast<const kj::byte*>(buffer_.begin()) + begin_;
  const size_t have = end_ - begin_;
  uint32_t head[2];
  if (have < sizeof head) return nullptr;
  std::memcpy(head, at, sizeof head);
  auto segments = FrameSegments(head);
  if (!segments.ok()) {
    status_ = segments.status();
    return nullptr;
  }
  const size_t rest_bytes = FrameTableRest(*segments);
  const size_t table = sizeof head + rest_bytes;
  if (have < table) return nullptr;
  std::vector<uint32_t> rest(rest_bytes / sizeof(uint32_t));
  if (rest_bytes > 0) std::memcpy(rest.data(), at + sizeof head, rest_bytes);
  auto sizes = FrameSizes(head, rest);
  if (!sizes.ok()) {
    status_ = sizes.status();
    return nullptr;
  }
  const size_t words = FrameWords(*sizes);
  const size_t body = words * sizeof(capnp::word);
  if (table + body > buffer_.size() * sizeof(capnp::word)) {
    // Read in place: what came of it so far, then the rest straight into its words.
    large_ = kj::heapArray<capnp::word>(words);
    large_sizes_ = std::move(*sizes);
    large_filled_ = have - table;
    if (large_filled_ > 0) std::memcpy(large_.begin(), at + table, large_filled_);
    begin_ = end_ = 0;
    return Next();
  }
  if (have < table + body) return nullptr;
  auto message = kj::heapArray<capnp::word>(words);
  if (body > 0) std::memcpy(message.begin(), at + table, body);
  begin_ += table + body;
  return DecodeChildMessage(std::move(message), *sizes);
}

size_t FirstSegmentWords(size_t payload) {
  return std::min<size_t>(payload, 64 * 1024) / sizeof(capnp::word) + 64;
}

Result<std::unique_ptr<ChildMessageIn>> ReceiveChildMessage(
    int fd, std::optional<std::chrono::milliseconds> wait) {
  if (wait) {
    pollfd p{fd, POLLIN, 0};
    int ready;
    do {
      ready = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(wait->count(), INT32_MAX)));
    } while (ready < 0 && errno == EINTR);
    if (ready == 0) return Timeout("no message in " + std::to_string(wait->count()) + " ms");
  }
  // Read whole, then decoded in place: nothing is read while it is traversed.
  uint32_t head[2];
  if (!ReadFully(fd, head, sizeof head)) return Unavailable("the other end closed");
  AIAC_ASSIGN_OR_RETURN(const uint32_t segments, FrameSegments(head));
  std::vector<uint32_t> rest(FrameTableRest(segments) / sizeof(uint32_t));
  if (!rest.empty() && !ReadFully(fd, rest.data(), rest.size() * sizeof(uint32_t)))
    return Unavailable("the other end closed");
  AIAC_ASSIGN_OR_RETURN(auto sizes, FrameSizes(head, rest));
  const size_t words = FrameWords(sizes);
  auto data = kj::heapArray<capnp::word>(words);
  if (words > 0 && !ReadFully(fd, data.begin(), words * sizeof(capnp::word)))
    return Unavailable("the other end closed in the middle of a message");
  return DecodeChildMessage(std::move(data), sizes);
}

}  // namespace aiac::daemon
