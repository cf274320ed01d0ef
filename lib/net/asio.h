// The Asio names every aiac network file uses. Boost.Asio 1.81, C++20 coroutines.
#pragma once

#include <boost/asio.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>

namespace aiac::net {
namespace asio = boost::asio;
using asio::awaitable;
using asio::ip::tcp;
using boost::system::error_code;
inline constexpr auto use_nothrow = asio::as_tuple(asio::use_awaitable);
}  // namespace aiac::net
