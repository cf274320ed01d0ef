// The registry exchange between peer super-nodes, one connection at a time (protocol 7,
// RegistryDelta): each digest period a super-node sends a peer what changed in its registry and
// its jobs since what it sent that peer last, not all of them; the connection's first message
// carries everything. A peer of an older protocol gets everything each period (RegistryDigest),
// which the receiving side reads as a full message.
//
// A heartbeat age changes with every heartbeat, so it does not make a record change: a record
// goes again when one of its fields changes, or when its daemon becomes late at its owner (no
// heartbeat for `late`, half the owner's failure timeout) or is on time again. A peer shows a late
// daemon's age as its owner measured it, brought forward; an on-time daemon's as the time since
// its owner's last message, which vouches for every daemon it holds (the owner drops a daemon
// silent for its failure timeout, and says so in its next message).
//
// Pure: no I/O, time comes in as arguments (docs/scale.md, "The registry exchange").
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "net/job_status.h"
#include "supernode/daemon_record.h"

namespace aiac::supernode {

// One message of the exchange.
struct RegistryChanges {
  bool full = false;                 // replaces everything the receiver holds of the sender
  std::vector<DaemonView> daemons;   // registered, or changed, since the last message
  std::vector<std::string> removed;  // no longer registered
  std::vector<net::JobStatus> jobs;  // registered, or changed
  std::vector<std::string> ended_jobs;
  // Heartbeat ages past this are exact at the receiver; 0: every age is (a whole digest).
  std::chrono::milliseconds late{0};
};

// The wire forms. A job that does not decode is left out (status cannot describe it); heartbeat
// ages and the late line are read as 0 to 24 h; a whole RegistryDigest reads as a full message
// whose every age is exact.
void ChangesToProto(const std::string& sender, const RegistryChanges& changes,
                    proto::RegistryDelta::Builder out);
RegistryChanges ChangesFromProto(proto::RegistryDelta::Reader in);
RegistryChanges ChangesFromDigest(proto::RegistryDigest::Reader in);

// What one connection was sent. Next() says what to send now, and counts it as sent.
class DeltaSender {
 public:
  // `daemons`: the registry as it is now, `jobs` its jobs, `late` the owner's late line.
  RegistryChanges Next(const std::vector<DaemonView>& daemons,
                       const std::vector<net::JobStatus>& jobs, std::chrono::milliseconds late);

 private:
  struct Sent {
    DaemonRecord record;
    bool running = false;
    bool late = false;
  };
  bool first_ = true;
  std::unordered_map<std::string, Sent> daemons_;
  std::unordered_map<std::string, net::JobStatus> jobs_;
};

// What one peer's messages said of its registry and jobs.
class PeerRegistry {
 public:
  using Clock = std::chrono::steady_clock;

  // A message that came at `now`. A change to a daemon it does not hold adds it; a removal of
  // one it does not hold is nothing.
  void Apply(RegistryChanges changes, Clock::time_point now);
  // Its daemons in id order, their heartbeat ages brought forward to `now` (see above).
  std::vector<DaemonView> Daemons(Clock::time_point now) const;
  // Its jobs, by id.
  const std::map<std::string, net::JobStatus>& jobs() const { return jobs_; }
  size_t size() const { return daemons_.size(); }
  size_t free_count() const { return free_; }

 private:
  struct Held {
    DaemonView view;
    Clock::time_point at;  // when it came
    bool exact = false;    // its age was past the late line: brought forward from `at`
  };
  void Forget(const std::string& id);

  std::map<std::string, Held> daemons_;
  std::map<std::string, net::JobStatus> jobs_;
  Clock::time_point last_{};  // its last message
  size_t free_ = 0;
};

}  // namespace aiac::supernode
