#include "net/message_parts.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "core/memory_budget.h"

namespace aiac::net {

namespace {

std::string Sha256Of(kj::ArrayPtr<const capnp::word> frame) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(frame.begin(), frame.size() * sizeof(capnp::word), out, &len, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<const char*>(out), len);
}

}  // namespace

// OpenSSL's incremental SHA-256 over the parts as they come.
struct PartAssembler::Digest {
  Digest() : ctx(EVP_MD_CTX_new()) { EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr); }
  ~Digest() { EVP_MD_CTX_free(ctx); }
  EVP_MD_CTX* ctx;
};

size_t PartBytes(size_t max_frame_bytes) {
  return std::min<size_t>(size_t{1} << 20, max_frame_bytes / 2);
}

std::vector<kj::Array<capnp::word>> SplitIntoParts(kj::ArrayPtr<const capnp::word> frame,
                                                   size_t part_bytes) {
  const auto* bytes = reinterpret_cast<const capnp::byte*>(frame.begin());
  const size_t total = frame.size() * sizeof(capnp::word);
  const std::string sha256 = Sha256Of(frame);
  std::vector<kj::Array<capnp::word>> parts;
  for (size_t offset = 0; offset < total; offset += part_bytes) {
    const size_t n = std::min(part_bytes, total - offset);
    capnp::MallocMessageBuilder message(static_cast<unsigned>(n / sizeof(capnp::word) + 64));
    auto part = message.initRoot<proto::Envelope>().initPart();
    part.setOffset(offset);
    part.setTotal(total);
    part.setBytes(kj::arrayPtr(bytes + offset, n));
    if (offset + n == total)
      part.setSha256(
          kj::arrayPtr(reinterpret_cast<const capnp::byte*>(sha256.data()), sha256.size()));
    parts.push_back(EncodeFrame(message));
  }
  return parts;
}

PartAssembler::PartAssembler(FrameLimits limits, MemoryBudget* budget)
    : limits_(limits), budget_(budget) {}
PartAssembler::~PartAssembler() = default;

Result<std::unique_ptr<IncomingMessage>> PartAssembler::Add(proto::Part::Reader part) {
  const uint64_t total = part.getTotal(), offset = part.getOffset();
  const auto bytes = part.getBytes();
  if (total_ == 0) {
    // The first part: the size is checked before anything is allocated for it.
    if (offset != 0)
      return ProtocolError("message part at offset " + std::to_string(offset) +
                           " without its start");
    if (total == 0 || total % sizeof(capnp::word) != 0) {
      return ProtocolError("message parts of " + std::to_string(total) +
                           " bytes in all (not a frame's size)");
    }
    if (total > limits_.max_message_bytes) {
      return ResourceExhausted("message of " + std::to_string(total) +
                               " bytes exceeds max_message_bytes " +
                               std::to_string(limits_.max_message_bytes));
    }
    AIAC_RETURN_IF_ERROR(CheckFitsInMemory("a message of " + std::to_string(total) + " bytes",
                                           static_cast<double>(total)));
    AIAC_ASSIGN_OR_RETURN(
        reserved_, ReserveFrom(budget_, "a message of " + std::to_string(total) + " bytes", total));
    words_ = kj::heapArray<capnp::word>(total / sizeof(capnp::word));
    total_ = total;
    received_ = 0;
    digest_ = std::make_unique<Digest>();
  }
  if (total != total_ || offset != received_ || bytes.size() == 0 ||
      bytes.size() > total_ - received_) {
    return ProtocolError("message part " + std::to_string(offset) + "+" +
                         std::to_string(bytes.size()) + " of " + std::to_string(total) +
                         " does not continue the message (" + std::to_string(received_) + " of " +
                         std::to_string(total_) + " bytes received)");
  }
  std::memcpy(reinterpret_cast<capnp::byte*>(words_.begin()) + received_, bytes.begin(),
              bytes.size());
  EVP_DigestUpdate(digest_->ctx, bytes.begin(), bytes.size());
  received_ += bytes.size();
  if (received_ < total_) {
    if (part.hasSha256()) return ProtocolError("message part with a hash before the last");
    return std::unique_ptr<IncomingMessage>();
  }
  unsigned char sha[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(digest_->ctx, sha, &len);
  const auto expected = part.getSha256();
  total_ = received_ = 0;
  digest_.reset();
  reserved_.Release();  // the message is the caller's now
  kj::Array<capnp::word> words = std::move(words_);
  if (expected.size() != len || std::memcmp(expected.begin(), sha, len) != 0) {
    return ProtocolError("message reassembled from parts does not match its SHA-256");
  }
  // Segments of a large message: a builder adds one per allocation it outgrows; thousands are
  // far more than any message of ours has.
  FrameLimits whole = limits_;
  whole.max_segments = std::max<uint32_t>(limits_.max_segments, 4096);
  AIAC_ASSIGN_OR_RETURN(auto message, ParseFrame(std::move(words), whole));
  AIAC_RETURN_IF_ERROR(message->CheckWellFormed());
  if (message->root().isPart()) return ProtocolError("a message part inside a message part");
  return message;
}

}  // namespace aiac::net
