#include "net/http_server.h"

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "core/metrics.h"
#include "net/listener.h"

namespace aiac::net {

namespace beast = boost::beast;
namespace http = beast::http;

struct HttpServer::Client {
  explicit Client(tcp::socket socket) : stream(std::move(socket)) {}
  beast::tcp_stream stream;
};

namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string PercentDecode(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] == '%' && i + 2 < text.size() && HexValue(text[i + 1]) >= 0 &&
               HexValue(text[i + 2]) >= 0) {
      out += static_cast<char>(HexValue(text[i + 1]) * 16 + HexValue(text[i + 2]));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

http::response<http::string_body> MakeResponse(unsigned version, bool keep_alive, HttpAnswer answer,
                                               bool head) {
  http::response<http::string_body> res{static_cast<http::status>(answer.status), version};
  res.set(http::field::server, "aiac");
  res.set(http::field::content_type, answer.content_type);
  res.set(http::field::cache_control, "no-store");
  res.set("X-Content-Type-Options", "nosniff");
  res.keep_alive(keep_alive);
  res.content_length(answer.body.size());
  if (!head) res.body() = std::move(answer.body);
  return res;
}

}  // namespace

std::string QueryValue(const std::string& query, const std::string& key) {
  size_t start = 0;
  while (start <= query.size()) {
    size_t end = query.find('&', start);
    if (end == std::string::npos) end = query.size();
    const std::string_view pair(query.data() + start, end - start);
    const size_t eq = pair.find('=');
    if (PercentDecode(pair.substr(0, eq)) == key) {
      return eq == std::string_view::npos ? "" : PercentDecode(pair.substr(eq + 1));
    }
    start = end + 1;
  }
  return "";
}

HttpServer::HttpServer(asio::io_context& io, Logger log, Limits limits)
    : io_(io), log_(std::move(log)), limits_(limits), acceptor_(io), group_(io.get_executor()) {}

HttpServer::~HttpServer() = default;

void HttpServer::Handle(std::string path, HttpHandler handler) {
  handlers_[std::move(path)] = std::move(handler);
}

Result<Endpoint> HttpServer::Start(const Endpoint& at) {
  AIAC_ASSIGN_OR_RETURN(Endpoint bound, Listen(acceptor_, at));
  group_.Spawn(AcceptLoop(), log_, "http accept loop");
  return bound;
}

awaitable<void> HttpServer::Stop() {
  stopping_ = true;
  error_code ignored;
  acceptor_.close(ignored);
  for (const auto& client : open_) client->stream.socket().close(ignored);
  co_await group_.Wait();
}

awaitable<void> HttpServer::AcceptLoop() {
  for (;;) {
    auto [ec, socket] = co_await acceptor_.async_accept(use_nothrow);
    if (stopping_ || ec == asio::error::operation_aborted) co_return;
    if (ec) {
      // Out of descriptors or the like: wait a little rather than spin.
      asio::steady_timer pause(io_, std::chrono::milliseconds(100));
      co_await pause.async_wait(use_nothrow);
      continue;
    }
    if (open_.size() >= limits_.max_connections) {
      log_->debug("http: {} connections open, closing a new one", open_.size());
      continue;  // the socket closes as it goes out of scope
    }
    auto client = std::make_shared<Client>(std::move(socket));
    open_.insert(client);
    group_.Spawn(Serve(client), log_, "http connection");
  }
}

awaitable<void> HttpServer::Serve(std::shared_ptr<Client> client) {
  beast::flat_buffer buffer;
  for (;;) {
    http::request_parser<http::empty_body> parser;
    parser.header_limit(kMaxHeaderBytes);
    client->stream.expires_after(limits_.idle_timeout);
    auto [ec, n] = co_await http::async_read(client->stream, buffer, parser, use_nothrow);
    if (ec == http::error::header_limit) {
      auto res = MakeResponse(
          11, false, {431, "text/plain; charset=utf-8", "request header larger than 16 KiB\n"},
          false);
      co_await http::async_write(client->stream, res, use_nothrow);
      break;
    }
    if (ec) break;  // closed, timed out, malformed
    const auto& req = parser.get();
    const std::string target(req.target());
    const size_t q = target.find('?');
    const std::string path = target.substr(0, q);
    const std::string query = q == std::string::npos ? "" : target.substr(q + 1);
    const bool head = req.method() == http::verb::head;
    HttpAnswer answer;
    if (req.method() != http::verb::get && !head) {
      answer = {405, "text/plain; charset=utf-8", "only GET and HEAD\n"};
    } else if (auto it = handlers_.find(path); it == handlers_.end()) {
      answer = {404, "text/plain; charset=utf-8", "no such page\n"};
    } else {
      answer = it->second(query);
    }
    auto res = MakeResponse(req.version(), req.keep_alive() && !stopping_, std::move(answer), head);
    if (req.method() != http::verb::get && !head) res.set(http::field::allow, "GET, HEAD");
    auto [wec, wn] = co_await http::async_write(client->stream, res, use_nothrow);
    if (wec || !res.keep_alive()) break;
  }
  error_code ignored;
  client->stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  client->stream.socket().close(ignored);
  open_.erase(client);
}

Result<Endpoint> ServeMetrics(HttpServer& server, const std::string& address, const Logger& log) {
  std::string text = address;
  if (text.find(':') == std::string::npos) text = "127.0.0.1:" + text;
  auto at = ParseEndpoint(text);
  if (!at.ok()) return InvalidArgument("--metrics: " + at.status().message());
  server.Handle("/metrics", [](const std::string&) {
    return HttpAnswer{200, "text/plain; version=0.0.4; charset=utf-8",
                      metrics::Registry::Process().Text()};
  });
  auto bound = server.Start(*at);
  if (!bound.ok()) return Unavailable("--metrics: " + bound.status().message());
  log->info("metrics at http://{}/metrics", bound->ToString());
  return bound;
}

}  // namespace aiac::net
