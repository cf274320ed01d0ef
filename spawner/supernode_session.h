// The spawner's link to the super-nodes of a platform, for the whole run: one connection at a
// time, to the first super-node of the list that answers; when that connection is lost (the
// super-node died, say) the session fails over to the next one, cycling through the list until
// one answers or the session stops. A super-node that leaves a request unanswered past its hold
// and answers nothing else meanwhile is lost as well (a hung host closes nothing). Requests for
// daemons are matched with their grants by request id; a request whose link was lost before the
// grant came is sent again on the next.
//
// A grant lost with its super-node leaves nothing behind: that super-node is gone, and the
// daemons it granted register again elsewhere, as free.
//
// The revocation lists the super-node passes on (net/revocation.h) are adopted into the
// spawner's trust (and kept in its revocation_file, when it names one); `on_revoked` then runs.
//
// Single-threaded: everything runs on the executor given to Start(). Stop() closes the
// connection and ends the link-keeping coroutine; outstanding Request()s return Unavailable.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/endpoint.h"
#include "core/logging.h"
#include "net/connection.h"
#include "net/job_status.h"
#include "net/reply_slot.h"
#include "net/revocation.h"
#include "spawner/granted_daemon.h"

namespace aiac::spawner {

// A super-node's answer to a request: the daemons, or why it could not grant them.
struct GrantAnswer {
  std::vector<GrantedDaemon> daemons;
  std::string error;  // non-empty: nothing was granted
};

class SupernodeSession {
 public:
  // `supernodes` must not be empty; they are tried in this order.
  SupernodeSession(std::vector<Endpoint> supernodes, net::NetOptions net, std::string spawner_id,
                   Logger log);
  ~SupernodeSession();

  // What to do once a revocation list was adopted (before Start()).
  void OnRevoked(std::function<void()> on_revoked) { on_revoked_ = std::move(on_revoked); }
  // What to do when someone asks to cancel the job (`aiac-spawner cancel`); `requester` says who
  // (before Start()).
  void OnCancel(std::function<void(const std::string& requester)> on_cancel) {
    on_cancel_ = std::move(on_cancel);
  }
  // Starts keeping the link on `executor`.
  void Start(net::asio::any_io_executor executor);
  // Waits until connected. Unavailable with the last dial error when no super-node of the list
  // answered `rounds` passes over it (each endpoint dialled with a few quick retries);
  // Unauthenticated at once when every super-node of the list refused our key.
  net::awaitable<Status> WaitConnected(int rounds);
  // How long a request may wait for its answer at least, whatever its deadline: an ask made at
  // the end of a wait still gets its answer.
  static constexpr std::chrono::seconds kMinAnswerTime{5};
  // The longest a super-node is asked to hold a request that cannot be met at once (it answers
  // as soon as daemons register); under kMinAnswerTime, so that the answer still comes in time.
  static constexpr std::chrono::milliseconds kMaxHold{3000};
  // How long after its hold a request's answer may take before the super-node, silent on the
  // link meanwhile, is taken for lost: the link is closed and the request asked of the next.
  static constexpr std::chrono::milliseconds kAnswerGrace{2000};
  // Asks for `count + spares` daemons for `job`, to be held by the super-node until met or until
  // `deadline` (kMaxHold at most). Returns the answer of the super-node that took the request
  // (failing over as needed), or Unavailable when none answered before `deadline` (or
  // kMinAnswerTime from now, when that is later).
  net::awaitable<Result<GrantAnswer>> Request(std::string job, uint32_t count, uint32_t spares,
                                              std::chrono::steady_clock::time_point deadline);
  // Gives `ids` back, on the current link (best effort: a lost release is undone by the
  // super-nodes' grant lease).
  void Release(const std::string& job, const std::vector<std::string>& ids);
  // Tells the super-node what the job is doing (registering it the first time, and again on each
  // new link); best effort, like Release().
  void Report(const net::JobStatus& job);
  // The job is over: the super-node forgets it.
  void EndJob(const std::string& job);
  // Ends the session: closes the link at once (a Release() just queued may be lost: Finish()
  // keeps it) and wakes every waiting Request() and WaitConnected().
  void Stop();
  // Ends the session once the super-node has read everything sent (Connection::CloseWhenFlushed,
  // `limit` at most), then as Stop() does; no fail-over meanwhile.
  net::awaitable<void> Finish(std::chrono::milliseconds limit);
  // "sn-local-1 (127.0.0.1:7400)" of the current link, or "none".
  std::string Describe() const;
  // How many times the session failed over to another super-node.
  int failovers() const { return failovers_; }

 private:
  net::awaitable<void> KeepLinked();
  // Reads grants until the link fails; returns why it did.
  net::awaitable<Status> Serve(net::ConnectionPtr conn);
  // A revocation list from the super-node: adopted when newer, then on_revoked_.
  void OnRevocations(const net::RevocationList& list);
  // Wakes every coroutine waiting in WaitForChange().
  void Signal();
  // Closes the link and wakes every waiter (Stop, Finish).
  void EndLink();
  // Waits until Signal() or `deadline`.
  net::awaitable<void> WaitForChange(std::chrono::steady_clock::time_point deadline);

  std::vector<Endpoint> supernodes_;
  net::NetOptions net_;
  std::string spawner_id_;
  Logger log_;
  net::ConnectionPtr conn_;
  // When the current link last brought a message.
  std::chrono::steady_clock::time_point last_heard_;
  // The connection to an older super-node that was told once the job goes unlisted there.
  const net::Connection* unlisted_at_ = nullptr;
  std::set<net::asio::steady_timer*> waiters_;  // one timer per coroutine in WaitForChange()
  std::map<uint64_t, std::shared_ptr<net::ReplySlot<GrantAnswer>>> pending_;
  uint64_t next_request_ = 1;
  int passes_failed_ = 0;         // passes over the list with no answer, since the last link
  size_t refusals_in_a_row_ = 0;  // super-nodes that refused our key, since the last link
  std::string last_error_;
  int failovers_ = 0;
  bool linked_once_ = false;
  std::function<void()> on_revoked_;
  std::function<void(const std::string&)> on_cancel_;
  bool stopping_ = false;
};

}  // namespace aiac::spawner
