// What a super-node knows of one daemon, and its conversions to and from the wire and disk.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "core/status.h"
#include "proto/aiac.capnp.h"

namespace aiac::supernode {

struct DaemonRecord {
  std::string id;
  std::string address;  // HOST:PORT the daemon listens on
  std::string cluster;
  double power = 1.0;
  uint32_t cores = 1;
  bool busy = false;
  std::string job;      // set while busy
  std::string owner;    // id of the super-node the daemon registered with
  uint64_t seq = 0;     // registration order at the owner; grants follow it
  std::string version;  // the aiac version the daemon runs, as it registered ("": unknown)

  friend bool operator==(const DaemonRecord&, const DaemonRecord&) = default;
};

// A daemon as `aiac-spawner status` shows it: its record, whether its last heartbeat said it runs
// a task (busy and not running: granted, its spawner not there yet), and how long ago that was.
struct DaemonView {
  DaemonRecord record;
  bool running = false;
  std::chrono::milliseconds heartbeat_age{0};
};

// What a Register must satisfy before it enters the registry: a valid id and cluster name, an
// address that parses as HOST:PORT, a finite non-negative power.
Status CheckDaemonRecord(const DaemonRecord& record);

void ToProto(const DaemonRecord& record, proto::DaemonInfo::Builder out);
DaemonRecord FromProto(proto::DaemonInfo::Reader in);
// With the figures of digests and status reports (DaemonInfo.running, .heartbeatAgeMs).
void ToProto(const DaemonView& view, proto::DaemonInfo::Builder out);
DaemonView ViewFromProto(proto::DaemonInfo::Reader in);

// Disk form (JSON text), and back; a record that does not decode is Corruption.
std::string Encode(const DaemonRecord& record);
Result<DaemonRecord> Decode(std::string_view text);

}  // namespace aiac::supernode
