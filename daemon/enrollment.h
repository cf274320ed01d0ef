// A daemon's enrollment (net/enrollment_token.h): with a one-time token and no certificate
// yet, it asks the enroller super-node the token names for one, offering the key it just made.
#pragma once

#include <string>
#include <vector>

#include "core/endpoint.h"
#include "core/logging.h"
#include "net/asio.h"
#include "net/certificate.h"
#include "net/connection.h"

namespace aiac::daemon {

// Dials `supernodes` in turn (its Hello offering the key of `net.identity`, an enrolling
// identity, under the token's daemon id) until it finds the super-node `token` names, sends
// the token and returns the certificate it gets, checked: for this id, this key and the daemon
// role, and believable under `net.identity->trust`. Errors: the super-node's refusal (a used
// or expired token, say), none of the super-nodes being the one the token names, or none
// answering.
net::awaitable<Result<net::Certificate>> Enroll(std::vector<Endpoint> supernodes,
                                                net::NetOptions net, std::string token, Logger log);

}  // namespace aiac::daemon
