// What a super-node knows of the federation: the daemons and running jobs, its own and (from
// their digests) its peers', read from its StatusReport; as JSON (docs/operations.md, "Seeing
// and stopping what runs", gives the fields): what `aiac-spawner status --json` prints and the
// super-node's web page reads.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "net/job_status.h"
#include "proto/aiac.capnp.h"

namespace aiac::net {

struct DaemonRow {
  std::string id, address, cluster;
  double power = 0;
  uint32_t cores = 0;
  std::string state;  // free | granted | busy | lost
  std::string job;    // granted or busy: the job
  int64_t task = -1;  // busy: the task it runs, from its job's status (-1: none known)
  double heartbeat_age_s = 0;
  std::string version;    // the aiac version it runs ("": unknown)
  std::string supernode;  // the super-node it is registered with
};

struct FederationStatus {
  std::string supernode;           // the one that answered
  std::vector<std::string> peers;  // its peers linked now
  std::vector<DaemonRow> daemons;  // registered (free, granted, busy), then lost
  std::vector<JobStatus> jobs;
};

// Every text the report carries goes through Printable(): a peer's digest cannot put control
// characters in a terminal or invalid UTF-8 in the JSON.
FederationStatus ReadStatusReport(proto::StatusReport::Reader report);

nlohmann::json ToJson(const FederationStatus& status);
nlohmann::json ToJson(const JobStatus& job);

// What `status` calls a daemon's state: lost, free, busy (its last heartbeat said it runs a
// task) or granted (busy for a job whose spawner has not started its task there yet).
const char* DaemonStateName(bool lost, bool busy, bool running);

// "2026-11-26T18:40:12+0000", in local time; "" for 0.
std::string IsoTime(int64_t unix_seconds);

}  // namespace aiac::net
