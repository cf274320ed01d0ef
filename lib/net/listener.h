// Opening a listening TCP acceptor on HOST:PORT (port 0: any free port), with Asio errors
// turned into one Status.
#pragma once

#include "core/endpoint.h"
#include "core/status.h"
#include "net/asio.h"

namespace aiac::net {

// Opens, binds and listens `acceptor` on `at`; returns the bound endpoint (the real port).
Result<Endpoint> Listen(tcp::acceptor& acceptor, const Endpoint& at);

}  // namespace aiac::net
