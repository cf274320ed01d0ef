// The canonical bytes a signature covers (node certificates, revocation lists, enrollment
// tokens, task capabilities, checkpoints): a domain string naming what is signed, then the
// fields in order, numbers big-endian and every text or byte string prefixed by its length, so
// that no two field lists make the same bytes and a signature over one kind of thing is never
// valid for another. FieldReader reads such fields back (an enrollment token's text form, a
// stored checkpoint proof).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace aiac {

class SignedBytes {
 public:
  explicit SignedBytes(std::string_view domain) { Text(domain); }

  SignedBytes& U8(uint8_t v) { return Number(v, 1); }
  SignedBytes& U32(uint32_t v) { return Number(v, 4); }
  SignedBytes& U64(uint64_t v) { return Number(v, 8); }
  SignedBytes& I64(int64_t v) { return Number(static_cast<uint64_t>(v), 8); }
  SignedBytes& Text(std::string_view s) {
    Number(s.size(), 4);
    bytes_.append(s);
    return *this;
  }

  const std::string& bytes() const { return bytes_; }

 private:
  SignedBytes& Number(uint64_t v, int width) {
    for (int i = width - 1; i >= 0; --i) bytes_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    return *this;
  }

  std::string bytes_;
};

// Reads, in order, fields written as SignedBytes writes them; each read is false (and reads
// nothing) when the bytes left are too few.
class FieldReader {
 public:
  explicit FieldReader(std::string_view bytes) : in_(bytes) {}

  bool U32(uint32_t& v) {
    uint64_t wide = 0;
    if (!Number(wide, 4)) return false;
    v = static_cast<uint32_t>(wide);
    return true;
  }
  bool U64(uint64_t& v) { return Number(v, 8); }
  bool I64(int64_t& v) {
    uint64_t raw = 0;
    if (!Number(raw, 8)) return false;
    v = static_cast<int64_t>(raw);
    return true;
  }
  bool Text(std::string& s) {
    uint64_t n = 0;
    if (in_.size() < 4) return false;
    std::string_view saved = in_;
    Number(n, 4);
    if (in_.size() < n) {
      in_ = saved;
      return false;
    }
    s.assign(in_.substr(0, n));
    in_.remove_prefix(n);
    return true;
  }
  // What is left unread.
  std::string_view rest() const { return in_; }

 private:
  bool Number(uint64_t& v, int width) {
    if (in_.size() < static_cast<size_t>(width)) return false;
    v = 0;
    for (int i = 0; i < width; ++i) v = (v << 8) | static_cast<unsigned char>(in_[i]);
    in_.remove_prefix(width);
    return true;
  }

  std::string_view in_;
};

}  // namespace aiac
