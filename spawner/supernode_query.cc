#include "spawner/supernode_query.h"

#include <unistd.h>

#include "net/identity.h"

namespace aiac::spawner {

namespace asio = net::asio;

std::string SpawnerId(const net::NetOptions& net) {
  return net.identity ? net.identity->certificate.id : "spawner-" + std::to_string(getpid());
}

Result<SupernodeAnswer> AskSupernode(const std::vector<Endpoint>& supernodes,
                                     const net::NetOptions& net, const std::string& spawner_id,
                                     const std::function<void(proto::Envelope::Builder)>& request,
                                     const std::function<bool(proto::Envelope::Reader)>& accept,
                                     std::chrono::milliseconds timeout) {
  if (supernodes.empty()) return InvalidArgument("no super-node given (--supernode HOST:PORT)");
  asio::io_context io;
  Result<SupernodeAnswer> outcome =
      Timeout("no super-node answered within " + std::to_string(timeout.count()) + " ms");
  net::ConnectionPtr conn;
  asio::co_spawn(
      io,
      [&]() -> net::awaitable<void> {
        net::RetryPolicy retry;
        retry.attempts = 2;
        retry.give_up_after = net.handshake_timeout;  // a stopped one: one timeout, not two
        std::string errors;
        size_t refused = 0;
        for (const Endpoint& at : supernodes) {
          auto dialed = co_await net::Dial(at, net, proto::Role::SPAWNER, spawner_id,
                                           proto::Role::SUPERNODE, retry);
          if (!dialed.ok()) {
            errors +=
                (errors.empty() ? "" : "; ") + at.ToString() + ": " + dialed.status().message();
            refused += dialed.status().code() == StatusCode::kUnauthenticated;
            continue;
          }
          if ((*dialed)->peer().version < net::kJobStatusVersion) {
            // It would close the connection on a message it does not know.
            errors += (errors.empty() ? "" : "; ") + at.ToString() + ": super-node " +
                      (*dialed)->peer().id + " speaks protocol " +
                      std::to_string((*dialed)->peer().version) + ", status and cancel need " +
                      std::to_string(net::kJobStatusVersion) + " (upgrade it)";
            (*dialed)->Close();
            continue;
          }
          conn = *dialed;
          conn->SendEnvelope(request);
          for (;;) {
            auto msg = co_await conn->Receive();
            if (!msg.ok()) {
              outcome = Unavailable("super-node " + conn->Describe() +
                                    " closed the connection: " + msg.status().message());
              break;
            }
            if (!accept((*msg)->root())) continue;
            outcome = SupernodeAnswer{std::move(*msg), conn->Describe()};
            break;
          }
          conn->Close();
          io.stop();
          co_return;
        }
        outcome = refused == supernodes.size() ? Unauthenticated(errors)
                                               : Unavailable("no super-node answered: " + errors);
        io.stop();
      },
      asio::detached);
  io.run_for(timeout);
  if (conn) conn->Close();
  return outcome;
}

}  // namespace aiac::spawner
