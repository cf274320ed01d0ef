// What a task's checkpoint holds besides the app's own state (docs/balancing.md): the number of
// item moves the task had applied when it was taken, and the items it had exported that the spawner
// has not confirmed yet. A task restored from it tells the spawner both (TaskReady), so the
// spawner can bring it to the moves done since (replaying them) and still collect exported
// items whose reply was lost with the daemon: every item stays owned by exactly one task.
//
// A synchronous task's checkpoint also holds the values it sent after its last two iterations:
// restored, it sends them again first, since a neighbour may still wait for either (the dead
// daemon may have taken them along unsent), and it computes only the iterations after.
//
// Encoding: "ats2", u64 moves, u32 outbox entries, each (u64 move, u64 moves, u64 count, u64
// size, the items), u32 sent iterations, each (u64 iteration, u32 values, each (u32 to, u64 size,
// the bytes)), then the app's state to the end. Little-endian. Without sent iterations (an
// asynchronous task), "ats1" and no count: the layout of the previous build, which reads it.
// Pure.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace aiac::runtime {

// Items a task exported in move `move`, its `moves`-th move.
struct ExportedItems {
  uint64_t move = 0;
  uint64_t moves = 0;
  uint64_t count = 0;  // items in `items`
  std::string items;
};

struct MoveState {
  uint64_t moves = 0;                 // item moves applied (exports, imports, drops)
  std::vector<ExportedItems> outbox;  // exports not yet confirmed by the spawner
};

// What a synchronous task sent after iteration `iteration`.
struct SentValues {
  struct Value {
    uint32_t to = 0;
    std::string bytes;
    bool operator==(const Value&) const = default;
  };
  uint64_t iteration = 0;
  std::vector<Value> values;
  bool operator==(const SentValues&) const = default;
};

// The first iteration whose values a synchronous task restored at iteration `restored` sends
// again (its checkpoint's last two; iteration 0 is the initial state, which no one waits for):
// its new daemon's value logs begin there.
inline uint64_t FirstResentIteration(uint64_t restored) {
  return std::max<uint64_t>(restored, 2) - 1;
}

std::string EncodeTaskState(const MoveState& moves, std::string_view app_state,
                            const std::vector<SentValues>& sent = {});

struct DecodedTaskState {
  MoveState moves;
  std::vector<SentValues> sent;
  std::string_view app_state;  // points into the decoded bytes
};
// Errors name what is wrong (not a task state, truncated).
Result<DecodedTaskState> DecodeTaskState(std::string_view state);

}  // namespace aiac::runtime
