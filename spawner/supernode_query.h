// One question to the super-nodes, for the commands that ask them and end (`status`, `cancel`):
// dials each super-node of the list in turn, as a spawner, until one answers; sends the request
// and returns the first reply `accept` takes (revocation lists on the way are skipped). A
// super-node that agreed on a protocol older than net::kJobStatusVersion is not asked.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/endpoint.h"
#include "net/connection.h"
#include "net/frame.h"

namespace aiac::spawner {

struct SupernodeAnswer {
  std::unique_ptr<net::IncomingMessage> message;
  std::string supernode;  // "sn-1 (127.0.0.1:7400)": the one that answered
};

// Unauthenticated when every super-node refused our credentials, Unavailable when none could be
// reached, Timeout when the one reached did not answer within `timeout`.
Result<SupernodeAnswer> AskSupernode(const std::vector<Endpoint>& supernodes,
                                     const net::NetOptions& net, const std::string& spawner_id,
                                     const std::function<void(proto::Envelope::Builder)>& request,
                                     const std::function<bool(proto::Envelope::Reader)>& accept,
                                     std::chrono::milliseconds timeout);

// The id a spawner proves: its certificate's, or without one "spawner-PID".
std::string SpawnerId(const net::NetOptions& net);

}  // namespace aiac::spawner
