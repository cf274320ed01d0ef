#include "net/listener.h"

namespace aiac::net {

Result<Endpoint> Listen(tcp::acceptor& acceptor, const Endpoint& at) {
  error_code ec;
  auto address = asio::ip::make_address(at.host, ec);
  if (ec) return InvalidArgument("listen address '" + at.host + "' is not an IP address");
  tcp::endpoint ep(address, at.port);
  acceptor.open(ep.protocol(), ec);
  if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(ep, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Unavailable("cannot listen on " + at.ToString() + ": " + ec.message());
  return Endpoint{at.host, acceptor.local_endpoint().port()};
}

}  // namespace aiac::net
