// DistPM's group coordinator on a daemon (distpm-workload-migration.md section 4.1:
// "each group coordinator gathers its current load information of the group and reports the
// information to the global coordinator", to reduce "the number of messages among remote
// processes"). The tasks whose daemons share a cluster report through the daemon of the group's
// first task, so the spawner, the global coordinator, gets one GroupReports per group and
// progress period instead of one TaskProgress per task across the slow links.
//
// A member's side: where its coordinator runs now (it follows NeighbourMoved). The coordinator's
// side: the newest TaskProgress of each member, taken only from the daemon the spawner named for
// that member, until the next GroupReports takes them.
//
// One per task session. Pure: TaskHost carries the messages. Not thread-safe.
#pragma once

#include <capnp/message.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/endpoint.h"
#include "daemon/assignment.h"
#include "proto/aiac.capnp.h"

namespace aiac::daemon {

class ReportGroup {
 public:
  struct Member {
    uint32_t task = 0;
    Endpoint address;
    std::string daemon;
  };

  // Task `self`'s group as AssignTask.group names it (checked by ParseAssignment: addresses that
  // do not parse are left out); empty: no group, reports go to the spawner.
  ReportGroup(uint32_t self, const std::vector<GroupMember>& group);
  ReportGroup() = default;

  // This task's daemon gathers the group's reports.
  bool coordinator() const { return !members_.empty() && members_.front().task == self_; }
  // A member's coordinator, where its reports go; nullopt for the coordinator and without a group.
  std::optional<Member> coordinator_of_member() const;

  // Task `task` now runs on `daemon` at `address` (a replacement): its reports come from there,
  // or, when it is the coordinator, go there. False when it is not in the group.
  bool Moved(uint32_t task, const Endpoint& address, const std::string& daemon);

  // The coordinator: `report` came from daemon `sender`. Kept (the task's newest) when this is
  // the group's coordinator, the report is of `job` and of another task of the group, and
  // `sender` runs that task; else false (the caller refuses the connection).
  bool Gather(const std::string& job, const std::string& sender,
              proto::TaskProgress::Reader report);
  size_t gathered() const { return gathered_.size(); }
  // Writes the gathered reports into out[first], out[first + 1], ... (out has room for
  // gathered() more) and forgets them.
  void TakeInto(capnp::List<proto::TaskProgress>::Builder out, unsigned first);

 private:
  uint32_t self_ = 0;
  std::vector<Member> members_;  // the coordinator first
  std::map<uint32_t, std::unique_ptr<capnp::MallocMessageBuilder>>
      gathered_;  // task -> its newest report
};

}  // namespace aiac::daemon
