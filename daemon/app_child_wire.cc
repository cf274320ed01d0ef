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
  // Read whole (the standard framing: segment count - 1, the segments' sizes in words, padding
  // to a word, the segments), then decoded in place: nothing is read while it is traversed.
  uint32_t head[2];
  if (!ReadFully(fd, head, sizeof head)) return Unavailable("the other end closed");
  const uint32_t segments = head[0] + 1;
  if (segments > 512) return Unavailable("a message of " + std::to_string(segments) + " segments");
  std::vector<uint32_t> sizes(segments);
  sizes[0] = head[1];
  const size_t table_words = (segments / 2) + 1;  // incl. the count: 4 + 4 * segments bytes, padded
  std::vector<uint32_t> rest(table_words * 2 - 2);
  if (!rest.empty() && !ReadFully(fd, rest.data(), rest.size() * 4))
    return Unavailable("the other end closed");
  uint64_t words = 0;
  for (uint32_t i = 0; i < segments; ++i) {
    if (i > 0) sizes[i] = rest[i - 1];
    words += sizes[i];
  }
  if (words > (uint64_t{1} << 31))
    return Unavailable("a message of " + std::to_string(words) + " words");
  auto message = std::make_unique<ChildMessageIn>();
  message->words = kj::heapArray<capnp::word>(words);
  if (words > 0 && !ReadFully(fd, message->words.begin(), words * sizeof(capnp::word)))
    return Unavailable("the other end closed in the middle of a message");
  message->segments = kj::heapArray<kj::ArrayPtr<const capnp::word>>(segments);
  const capnp::word* at = message->words.begin();
  for (uint32_t i = 0; i < segments; ++i) {
    message->segments[i] = kj::arrayPtr(at, sizes[i]);
    at += sizes[i];
  }
  // States and slices of large blocks: far above the default traversal limit (64 MiB).
  capnp::ReaderOptions options;
  options.traversalLimitInWords = words + 1024;
  message->reader.emplace(message->segments.asPtr(), options);
  return message;
}

}  // namespace aiac::daemon
