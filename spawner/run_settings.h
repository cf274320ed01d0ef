// How one run is carried out, beyond the job file and the spawner's options: the mapping, the
// mode, the tasks' shares before the run and how moved items travel (`aiac-spawner run` flags).
// Modes are enums; their names (the flags' values and the summary's fields) are in one table
// each, which the flags' checks and the summary both use.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "balance/lee_cho.h"
#include "balance/live_balancer.h"
#include "core/status.h"

namespace aiac::spawner {

// The tasks' shares of the work before the run (App::Reweigh).
enum class Split {
  kPower,  // by the daemons' powers, when they differ by more than kReweighSpread
  kEqual,  // never reweighed (Lee & Cho's S_E)
  kSm,     // Lee & Cho's static S_M (eq. 9 on means only), on an emulated platform
  kSp,     // Lee & Cho's static S_P (eq. 9 with sigma_n), on an emulated platform
};

// How moved items travel between running tasks.
enum class Migration {
  kDistPM,   // daemon to daemon, between clusters through DistPM's gateways, each channel's
             // amount from its LP (3) (spawner/gateways.h)
  kGreedy,   // the same, the channels filled greedily (DistPM paper, section 5.1)
  kRing,     // between neighbours on the ring of tasks, planned by the ring paper
  kNearest,  // the same, each item the fewest hops (the nearest-neighbour shuffle)
  kSpawner,  // through the spawner (the export's reply, then the import)
};

// The names users give and read: "power", "equal", "sm", "sp"; "distpm", "greedy", "ring",
// "nearest", "spawner".
const std::vector<std::pair<std::string, Split>>& SplitNames();
const std::vector<std::pair<std::string, Migration>>& MigrationNames();
std::string SplitName(Split split);
std::string MigrationName(Migration migration);
// "--split must be power, equal, sm or sp, not 'x'".
Result<Split> ParseSplit(const std::string& name);
Result<Migration> ParseMigration(const std::string& name);

// Daemons whose powers differ by at most this ratio count as equal: measured powers of
// identical hosts spread 1.04x on a quiet machine (power_bench), and reweighing on noise would
// unbalance what is balanced.
inline constexpr double kReweighSpread = 1.2;

struct RunSettings {
  std::string mapping = "maheve";  // maheve | default | aiac-qm | f-ec (mapping::MakeMapper)
  bool sync = false;
  // How long a replacement may wait for a daemon from a super-node once no granted one is free;
  // 0 asks once (a local cluster has no other daemons); none: the options' wait_daemons.
  std::optional<std::chrono::milliseconds> replacement_wait;
  // Live balancing (docs/balancing.md): Lee & Cho's D_P by default; it acts only when the app's
  // tasks hold movable items, and the summary then says "off" otherwise.
  balance::BalanceMode balance = balance::BalanceMode::kProposed;
  Split split = Split::kPower;
  // With kSm / kSp: each daemon's figures (power, competing jobs), by daemon id.
  std::map<std::string, balance::Workstation> nodes;
  Migration migration = Migration::kDistPM;
  // A channel's latency (seconds) and seconds per byte between two clusters (the same cluster
  // twice: inside it), when known (an emulated platform's links); unknown channels count as
  // equal.
  std::function<std::optional<std::pair<double, double>>(const std::string&, const std::string&)>
      channel;
  // A local emulated platform's daemon ids in the order they were started: the granted daemons
  // are taken in it (the order they came up, which the default mapping follows), not in the
  // order their registrations happened to reach the super-node when they started together.
  // Empty: the super-node's order.
  std::vector<std::string> start_order;
};

}  // namespace aiac::spawner
