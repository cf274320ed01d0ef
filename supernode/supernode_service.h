// The super-node's network side: accepts daemons (Register, Heartbeat), spawners
// (RequestDaemons, ReleaseDaemons) and peer super-nodes (RegistryDigest, forwarded requests),
// expires silent daemons, and keeps links to the configured peers.
//
// A spawner may ask any super-node: when its own free daemons are not enough it forwards the
// rest of the request to peers whose last digest shows free daemons; the grant is all or nothing
// (partial forwarded grants are released again). Each daemon is granted only by the super-node
// it registered with, so a daemon is never granted twice.
//
// Who may do what is checked per message, by the role the peer proved in the handshake: only
// daemons register and heartbeat (and only as the id they proved), only spawners request and
// release daemons, only super-nodes exchange digests and forward grants. Anything else closes
// the connection with one log line.
//
// Trust (docs/security.md): an enroller super-node certifies daemons that come to enroll with a
// one-time token (supernode/enroller.h); every super-node adopts the newest revocation list of
// each authority, from its revocation file (re-read when it changes) or from a peer, writes it
// back to that file, passes it on to its peers, daemons and spawners, closes the connections of
// revoked peers and forgets revoked daemons.
//
// What runs, and stopping it (supernode_status.cc): a spawner registers its job with its first
// JobStatus and updates it at most once a second; `aiac-spawner status` (StatusQuery) gets the
// registry and the jobs of this super-node and, from their digests, of its peers; `aiac-spawner
// cancel` (CancelJob, spawners only) reaches the job's spawner here or through the peer the job
// is registered with, and is logged with who asked.
//
// Seen from outside (supernode_web.cc): with `--metrics`, the process's Prometheus metrics (with
// aiac_daemons{state} and aiac_jobs of this super-node) and a read-only web page at `/` that
// reads `/api/status` (what `status --json` prints) and `/api/history?job=ID` (JobHistory).
//
// Runs on one io_context thread; Stop() closes every connection and ends every coroutine.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "core/endpoint.h"
#include "core/logging.h"
#include "core/metrics.h"
#include "net/connection.h"
#include "net/group_commit.h"
#include "net/http_server.h"
#include "net/reply_slot.h"
#include "net/server.h"
#include "net/task_group.h"
#include "supernode/enroller.h"
#include "supernode/job_board.h"
#include "supernode/job_history.h"
#include "supernode/registry.h"
#include "supernode/registry_delta.h"
#include "supernode/supernode_options.h"

namespace aiac::supernode {

class SupernodeService {
 public:
  // The most task rows of a job a digest carries to the peers (status --job at a peer then shows
  // the job without its rows).
  static constexpr size_t kDigestTaskRows = 1024;
  // `used_tokens` (may be null: no enrollment) records redeemed enrollment tokens.
  SupernodeService(net::asio::io_context& io, SupernodeOptions options, Registry& registry,
                   Logger log, UsedTokens* used_tokens = nullptr);
  ~SupernodeService();

  // Binds the listener and starts serving. Returns the bound endpoint.
  Result<Endpoint> Start(const Endpoint& listen);
  // Closes every connection and wakes every wait; completes once every coroutine of the
  // service (connections, held requests, peer links, housekeeping) has ended.
  net::awaitable<void> Stop();
  // The first half of Stop, for the destructor: closes, does not wait.
  void Close();
  // Serves the web page and its data on `http` (which also serves `/metrics`), and adds this
  // super-node's gauges to the process's metrics. `http` runs on the same io_context.
  void ServeWeb(net::HttpServer& http);
  // The most connections (daemons, spawners, peers) it holds at once.
  size_t max_connections() const { return server_.max_connections(); }

 private:
  struct PeerLink {
    net::ConnectionPtr conn;
    std::string id;
    PeerRegistry view;  // what the peer's messages said of its registry and jobs
    DeltaSender sent;   // what this link was sent of ours (protocol 7)
  };
  struct GrantOutcome {
    std::vector<DaemonRecord> daemons;
    std::string error;
  };

  net::awaitable<void> Serve(net::ConnectionPtr conn);
  net::awaitable<void> ServeDaemon(net::ConnectionPtr conn);
  net::awaitable<void> ServeSpawner(net::ConnectionPtr conn);
  net::awaitable<void> ServeSpawnerMessages(net::ConnectionPtr conn);
  net::awaitable<void> ServePeer(net::ConnectionPtr conn);
  // An enrolling daemon (net::PeerIdentity::enrolling): one Enroll, one Enrolled, closed.
  net::awaitable<void> ServeEnrollment(net::ConnectionPtr conn);
  // Revocation lists: adopts `list` (from `source`, for the log) when newer, then writes it to
  // the revocation file, passes it to every connection but `from`, closes revoked peers and
  // forgets revoked daemons.
  void OfferRevocations(const net::RevocationList& list, const std::string& source,
                        const net::Connection* from);
  // Sends every list held to `conn`.
  void SendRevocations(net::Connection& conn);
  // Adopts the revocation file's list when the file changed since the last look.
  void ReloadRevocationFile();
  net::awaitable<void> DialPeer(Endpoint peer);
  net::awaitable<void> Housekeeping();
  // Logs once when the registry store fails, and resyncs it once it takes writes again.
  void WatchStore();

  // Grants `count` daemons for `job`, forwarding to peers when allowed.
  net::awaitable<GrantOutcome> GrantFor(std::string job, size_t count, bool allow_forward);
  void ReleaseFor(const std::string& job, const std::vector<std::string>& ids, bool forward);
  void SendDigest(PeerLink& link);
  void SendGrant(net::Connection& conn, uint64_t request_id, const GrantOutcome& outcome);
  // Answers a spawner's request once it can be met (a daemon registered, was released, or a
  // peer's digest shows free ones), or after `hold` with why it cannot.
  net::awaitable<void> GrantWhenMet(net::ConnectionPtr conn, uint64_t request_id, std::string job,
                                    size_t count, std::chrono::milliseconds hold);
  // Wakes the held requests: the daemons they may get changed.
  void WakeHeld();

  // ---- Jobs, status and cancel (supernode_status.cc).
  // A spawner's JobStatus: registers or updates its job. False when the connection must close.
  bool OnJobStatus(const net::ConnectionPtr& conn, proto::JobStatus::Reader in);
  void OnJobEnded(const net::Connection& conn, const std::string& job);
  // The spawner's connection ended: its jobs are kept as spawner-lost (job_board.h).
  void ForgetJobsOf(const net::Connection& conn);
  // Forgets the spawner-lost jobs no daemon runs a task of any more, here or at a peer (at each
  // housekeeping pass).
  void ForgetLostJobs();
  void AnswerStatus(net::Connection& conn, uint64_t request_id);
  // The registry and jobs of this super-node and, from their digests, of its peers.
  void FillStatusReport(proto::StatusReport::Builder report);
  // Tells job `job`'s spawner to end it, here or through the peer it is registered with
  // (`allow_forward`), and answers `conn` (a spawner, or the peer that forwarded the cancel).
  net::awaitable<void> Cancel(net::ConnectionPtr conn, uint64_t request_id, std::string job,
                              std::string requester, bool allow_forward);
  // A peer's answer to a forwarded cancel.
  void OnCancelAnswer(proto::CancelAnswer::Reader answer);

  net::asio::io_context& io_;
  SupernodeOptions options_;
  std::optional<Enroller> enroller_;  // when this super-node's certificate says it enrolls
  std::filesystem::file_time_type revocation_file_seen_{};
  std::map<std::string, std::string> daemon_keys_;  // registered here: id -> certified key
  Registry& registry_;
  net::GroupCommit registrations_;  // the registry's staged registrations, one write per batch
  Logger log_;
  net::Server server_;
  net::TaskGroup tasks_;  // housekeeping, peer links, held requests (the server has its own)
  bool stopping_ = false;
  bool store_down_ = false;
  std::map<net::Connection*, PeerLink> peers_;
  std::map<uint64_t, std::shared_ptr<net::ReplySlot<GrantOutcome>>> pending_;
  uint64_t next_request_ = 1;
  std::unique_ptr<net::asio::steady_timer> housekeeping_timer_;
  std::set<net::asio::steady_timer*> held_;  // the timers of the requests waiting for daemons
  JobBoard jobs_;
  JobHistory history_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  metrics::Registry::Collector daemons_metric_, jobs_metric_;
  struct CancelOutcome {
    std::string error, supernode;
  };
  std::map<uint64_t, std::shared_ptr<net::ReplySlot<CancelOutcome>>> cancels_;  // forwarded
};

}  // namespace aiac::supernode
