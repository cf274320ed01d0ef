// A blocking HTTP/1.1 client for tests (Boost.Beast), and reading a sample out of a Prometheus
// text page.
#pragma once

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cmath>
#include <sstream>
#include <string>

namespace aiac::testing {

struct HttpReply {
  unsigned status = 0;  // 0: no answer (refused, closed, timed out)
  std::string content_type;
  std::string body;
};

// GET `target` from HOST:PORT, within 10 s.
inline HttpReply HttpGet(const std::string& host_port, const std::string& target) {
  namespace beast = boost::beast;
  namespace http = beast::http;
  HttpReply reply;
  const size_t colon = host_port.rfind(':');
  try {
    boost::asio::io_context io;
    beast::tcp_stream stream(io);
    stream.expires_after(std::chrono::seconds(10));
    boost::asio::ip::tcp::endpoint at(
        boost::asio::ip::make_address(host_port.substr(0, colon)),
        static_cast<unsigned short>(std::stoi(host_port.substr(colon + 1))));
    stream.connect(at);
    http::request<http::empty_body> req{http::verb::get, target, 11};
    req.set(http::field::host, host_port);
    http::write(stream, req);
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    http::read(stream, buffer, res);
    reply.status = res.result_int();
    reply.content_type = std::string(res[http::field::content_type]);
    reply.body = std::move(res.body());
  } catch (const std::exception&) {
    reply.status = 0;
  }
  return reply;
}

// The value of sample `key` (its name and labels exactly as the page writes them, e.g.
// `aiac_frames_total{direction="sent"}`); NaN when the page has no such sample.
inline double MetricValue(const std::string& page, const std::string& key) {
  std::istringstream lines(page);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.size() > key.size() && line.compare(0, key.size(), key) == 0 &&
        line[key.size()] == ' ') {
      return std::stod(line.substr(key.size() + 1));
    }
  }
  return std::nan("");
}

}  // namespace aiac::testing
