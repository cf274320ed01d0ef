#include "runtime/task_state.h"

namespace aiac::runtime {
namespace {

constexpr std::string_view kMagic = "ats1";

void PutU64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

bool TakeU64(std::string_view& in, uint64_t& v) {
  if (in.size() < 8) return false;
  v = 0;
  for (int i = 7; i >= 0; --i)
    v = (v << 8) | static_cast<unsigned char>(in[static_cast<size_t>(i)]);
  in.remove_prefix(8);
  return true;
}

}  // namespace

std::string EncodeTaskState(const MoveState& moves, std::string_view app_state) {
  size_t size = kMagic.size() + 12 + app_state.size();
  for (const auto& e : moves.outbox) size += 32 + e.items.size();
  std::string out;
  out.reserve(size);
  out += kMagic;
  PutU64(out, moves.moves);
  const auto n = static_cast<uint32_t>(moves.outbox.size());
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  for (const auto& e : moves.outbox) {
    PutU64(out, e.move);
    PutU64(out, e.moves);
    PutU64(out, e.count);
    PutU64(out, e.items.size());
    out += e.items;
  }
  out += app_state;
  return out;
}

Result<DecodedTaskState> DecodeTaskState(std::string_view state) {
  if (!state.starts_with(kMagic))
    return Corruption("checkpoint: not a task state (no 'ats1' header)");
  std::string_view in = state.substr(kMagic.size());
  DecodedTaskState d;
  if (!TakeU64(in, d.moves.moves) || in.size() < 4)
    return Corruption("checkpoint: task state header truncated");
  uint32_t n = 0;
  for (int i = 3; i >= 0; --i)
    n = (n << 8) | static_cast<unsigned char>(in[static_cast<size_t>(i)]);
  in.remove_prefix(4);
  // Each entry takes at least 32 bytes: a count past what is left is a corrupt header, caught
  // before anything is reserved for it.
  if (n > in.size() / 32)
    return Corruption("checkpoint: task state holds " + std::to_string(n) + " exports in " +
                      std::to_string(in.size()) + " bytes");
  for (uint32_t i = 0; i < n; ++i) {
    ExportedItems e;
    uint64_t size = 0;
    if (!TakeU64(in, e.move) || !TakeU64(in, e.moves) || !TakeU64(in, e.count) ||
        !TakeU64(in, size) || size > in.size()) {
      return Corruption("checkpoint: export " + std::to_string(i) +
                        " of the task state is truncated");
    }
    e.items.assign(in.substr(0, size));
    in.remove_prefix(size);
    d.moves.outbox.push_back(std::move(e));
  }
  d.app_state = in;
  return d;
}

}  // namespace aiac::runtime
