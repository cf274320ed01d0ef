// The running jobs registered with a super-node: the latest JobStatus each spawner sent
// (net/job_status.h), and the connection it came on, to tell that spawner of a cancel. A record
// lives as long as its job and its spawner's connection: JobEnded or the connection's end
// forgets it. Logic only; not thread-safe.
#pragma once

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
  // Forgets every job of `spawner` (its connection closed); their ids.
  std::vector<std::string> DropSpawner(const net::Connection* spawner);
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
