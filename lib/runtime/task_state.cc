#include "runtime/task_state.h"

#include "core/little_endian.h"

namespace aiac::runtime {
namespace {

constexpr std::string_view kMagic = "ats2";
constexpr std::string_view kMagicWithoutSent = "ats1";

// A count of entries of at least `min_size` bytes each past what is left is a corrupt header,
// caught before anything is reserved for it.
Status CheckCount(uint32_t n, size_t min_size, std::string_view in, const char* what) {
  if (n <= in.size() / min_size) return Status::Ok();
  return Corruption("checkpoint: task state holds " + std::to_string(n) + " " + what + " in " +
                    std::to_string(in.size()) + " bytes");
}

Status TakeSent(std::string_view& in, std::vector<SentValues>& sent) {
  uint32_t n = 0;
  if (!TakeLittleEndian(in, n)) return Corruption("checkpoint: task state header truncated");
  AIAC_RETURN_IF_ERROR(CheckCount(n, 12, in, "sent iterations"));
  for (uint32_t i = 0; i < n; ++i) {
    SentValues s;
    uint32_t values = 0;
    if (!TakeLittleEndian(in, s.iteration) || !TakeLittleEndian(in, values))
      return Corruption("checkpoint: sent iteration " + std::to_string(i) + " is truncated");
    AIAC_RETURN_IF_ERROR(CheckCount(values, 12, in, "sent values"));
    for (uint32_t k = 0; k < values; ++k) {
      SentValues::Value v;
      uint64_t size = 0;
      if (!TakeLittleEndian(in, v.to) || !TakeLittleEndian(in, size) || size > in.size())
        return Corruption("checkpoint: a value sent after iteration " +
                          std::to_string(s.iteration) + " is truncated");
      v.bytes.assign(in.substr(0, size));
      in.remove_prefix(size);
      s.values.push_back(std::move(v));
    }
    sent.push_back(std::move(s));
  }
  return Status::Ok();
}

}  // namespace

std::string EncodeTaskState(const MoveState& moves, std::string_view app_state,
                            const std::vector<SentValues>& sent) {
  size_t size = kMagic.size() + 16 + app_state.size();
  for (const auto& e : moves.outbox) size += 32 + e.items.size();
  for (const auto& s : sent) {
    size += 12;
    for (const auto& v : s.values) size += 12 + v.bytes.size();
  }
  std::string out;
  out.reserve(size);
  // Without sent values, the former layout: a daemon of the previous build reads it.
  out += sent.empty() ? kMagicWithoutSent : kMagic;
  PutLittleEndian(out, moves.moves, 8);
  PutLittleEndian(out, static_cast<uint32_t>(moves.outbox.size()), 4);
  for (const auto& e : moves.outbox) {
    PutLittleEndian(out, e.move, 8);
    PutLittleEndian(out, e.moves, 8);
    PutLittleEndian(out, e.count, 8);
    PutLittleEndian(out, e.items.size(), 8);
    out += e.items;
  }
  if (!sent.empty()) PutLittleEndian(out, static_cast<uint32_t>(sent.size()), 4);
  for (const auto& s : sent) {
    PutLittleEndian(out, s.iteration, 8);
    PutLittleEndian(out, static_cast<uint32_t>(s.values.size()), 4);
    for (const auto& v : s.values) {
      PutLittleEndian(out, v.to, 4);
      PutLittleEndian(out, v.bytes.size(), 8);
      out += v.bytes;
    }
  }
  out += app_state;
  return out;
}

Result<DecodedTaskState> DecodeTaskState(std::string_view state) {
  const bool with_sent = state.starts_with(kMagic);
  if (!with_sent && !state.starts_with(kMagicWithoutSent))
    return Corruption("checkpoint: not a task state (no 'ats2' header)");
  std::string_view in = state.substr(kMagic.size());
  DecodedTaskState d;
  uint32_t n = 0;
  if (!TakeLittleEndian(in, d.moves.moves) || !TakeLittleEndian(in, n))
    return Corruption("checkpoint: task state header truncated");
  AIAC_RETURN_IF_ERROR(CheckCount(n, 32, in, "exports"));
  for (uint32_t i = 0; i < n; ++i) {
    ExportedItems e;
    uint64_t size = 0;
    if (!TakeLittleEndian(in, e.move) || !TakeLittleEndian(in, e.moves) ||
        !TakeLittleEndian(in, e.count) || !TakeLittleEndian(in, size) || size > in.size()) {
      return Corruption("checkpoint: export " + std::to_string(i) +
                        " of the task state is truncated");
    }
    e.items.assign(in.substr(0, size));
    in.remove_prefix(size);
    d.moves.outbox.push_back(std::move(e));
  }
  if (with_sent) AIAC_RETURN_IF_ERROR(TakeSent(in, d.sent));
  d.app_state = in;
  return d;
}

}  // namespace aiac::runtime
