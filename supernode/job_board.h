// The running jobs registered with a super-node: the latest JobStatus each spawner sent
// (net/job_status.h), and the connection it came on, to tell that spawner of a cancel. A record
// lives as long as its job: JobEnded forgets it; when its spawner's connection closes without
// it, the job is kept as spawner-lost (its tasks may run on, waiting for `aiac-spawner resume`)
// until a spawner registers it again or no daemon runs its tasks any more. Logic only; not
// thread-safe.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "net/connection.h"
#include "net/job_status.h"

namespace aiac::supernode {

class JobBoard {
 public:
  enum class Update {
    kRegistered,  // the job was not known
    kUpdated,
    kRefused,  // another spawner's open connection registered that id
  };
  // Adds or replaces `job` (its id's record) for `spawner`; a record of the same spawner id on
  // another connection, or of a closed connection, is taken over.
  Update Put(net::JobStatus job, net::ConnectionPtr spawner);
  // Forgets job `id` when `spawner` registered it; true when it did.
  bool End(const std::string& id, const net::Connection* spawner);
  // Every job of `spawner` (its connection closed) becomes spawner-lost (phase
  // net::kSpawnerLostPhase, its tasks' report ages and its eta unknown); their ids.
  std::vector<std::string> DropSpawner(const net::Connection* spawner);
  // Forgets the spawner-lost jobs for which `running(id)` is false (no daemon runs their tasks
  // any more); their ids.
  std::vector<std::string> ForgetLost(const std::function<bool(const std::string&)>& running);
  // Whether job `id` is registered here and its spawner lost.
  bool IsLost(const std::string& id) const;
  bool any_lost() const;
  // The connection of job `id`'s spawner; null when the job is not registered here.
  net::ConnectionPtr SpawnerOf(const std::string& id) const;
  // Every job, in id order.
  std::vector<net::JobStatus> Jobs() const;
  size_t size() const { return jobs_.size(); }

 private:
  struct Entry {
    net::JobStatus job;
    net::ConnectionPtr spawner;
  };
  std::map<std::string, Entry> jobs_;
};

}  // namespace aiac::supernode
