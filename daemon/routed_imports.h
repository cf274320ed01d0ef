// The receiving end of items that travel daemon to daemon (docs/balancing.md; DistPM's migration
// gateways): the items of move m reach the task's daemon by RelayItems, from whichever daemon
// passed them on, and are imported only once the spawner's MoveItems names their SHA-256 (the
// spawner has the items from the export's reply), so no other daemon can slip items into the
// task. When the route failed the spawner sends the items itself: a move is imported once,
// whichever copy comes first.
//
// One per task session (an incarnation of the task): a replacement gets its moves again from the
// spawner's journal. Not thread-safe; pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "core/status.h"

namespace aiac::daemon {

class RoutedImports {
 public:
  // Items that came before the spawner named them, kept at most this many moves (the oldest go).
  static constexpr size_t kMaxWaiting = 16;

  // The spawner expects move `move`'s items to hash to `sha256` (32 raw bytes): the items to
  // import now when they came already and match; nullopt otherwise (they will come, or the
  // spawner sends them itself).
  std::optional<std::string> Expect(uint64_t move, const std::string& sha256);
  // Move `move`'s items came by their route: the items to import now when the spawner named them;
  // nullopt when it has not yet, or the move is imported already; an error when they do not hash
  // to what the spawner named (they are dropped).
  Result<std::optional<std::string>> Arrive(uint64_t move, std::string items);
  // The spawner sends move `move`'s items itself: true when they are to be imported (the routed
  // copy has not been).
  bool Direct(uint64_t move);
  // Moves waiting for their items or for the spawner's word.
  size_t waiting() const { return expected_.size() + arrived_.size(); }

 private:
  std::set<uint64_t> taken_;
  std::map<uint64_t, std::string> expected_;  // move -> SHA-256
  std::map<uint64_t, std::string> arrived_;   // move -> items
};

}  // namespace aiac::daemon
