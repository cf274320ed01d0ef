#include "daemon/routed_imports.h"

#include "core/sha256.h"
#include "runtime/plugin.h"

namespace aiac::daemon {

std::optional<std::string> RoutedImports::Expect(uint64_t move, const std::string& sha256) {
  if (taken_.count(move)) return std::nullopt;
  auto came = arrived_.find(move);
  if (came != arrived_.end() && Sha256(came->second) == sha256) {
    std::string items = std::move(came->second);
    arrived_.erase(came);
    taken_.insert(move);
    return items;
  }
  // Items that do not match were not the spawner's: whatever comes next must.
  if (came != arrived_.end()) arrived_.erase(came);
  expected_[move] = sha256;
  return std::nullopt;
}

Result<std::optional<std::string>> RoutedImports::Arrive(uint64_t move, std::string items) {
  if (taken_.count(move)) return std::optional<std::string>();
  auto named = expected_.find(move);
  if (named == expected_.end()) {
    arrived_[move] = std::move(items);
    while (arrived_.size() > kMaxWaiting) arrived_.erase(arrived_.begin());
    return std::optional<std::string>();
  }
  if (Sha256(items) != named->second) {
    return InvalidArgument("the items of move " + std::to_string(move) +
                           " do not hash to what the spawner named");
  }
  expected_.erase(named);
  taken_.insert(move);
  return std::optional<std::string>(std::move(items));
}

bool RoutedImports::Direct(uint64_t move) {
  if (!taken_.insert(move).second) return false;
  expected_.erase(move);
  arrived_.erase(move);
  return true;
}

}  // namespace aiac::daemon
