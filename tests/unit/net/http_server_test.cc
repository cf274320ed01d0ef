#include "net/http_server.h"

#include <gtest/gtest.h>

#include <thread>

#include "support/http_client.h"

namespace aiac::net {
namespace {

TEST(HttpServerTest, QueryValuesAreDecoded) {
  EXPECT_EQ(QueryValue("job=a-1&x=2", "job"), "a-1");
  EXPECT_EQ(QueryValue("x=2&job=a%2Fb+c", "job"), "a/b c");
  EXPECT_EQ(QueryValue("x=2", "job"), "");
  EXPECT_EQ(QueryValue("", "job"), "");
  EXPECT_EQ(QueryValue("job=%zz%4", "job"), "%zz%4");
}

// A server on its own io thread, asked by a blocking client.
class HttpServerOnAThread : public ::testing::Test {
 protected:
  void SetUp() override {
    server_.Handle("/hello", [](const std::string& query) {
      return HttpAnswer{200, "text/plain; charset=utf-8", "hi " + QueryValue(query, "who")};
    });
    auto bound = server_.Start({"127.0.0.1", 0});
    ASSERT_TRUE(bound.ok());
    address_ = bound->ToString();
    thread_ = std::thread([this] { io_.run(); });
  }
  void TearDown() override {
    asio::co_spawn(io_, server_.Stop(), asio::detached);
    thread_.join();
  }
  // A raw connection to the server, to send what a client library would not.
  tcp::socket Connect(asio::io_context& io) const {
    tcp::socket s(io);
    const size_t colon = address_.rfind(':');
    s.connect({asio::ip::make_address("127.0.0.1"),
               static_cast<unsigned short>(std::stoi(address_.substr(colon + 1)))});
    return s;
  }
  asio::io_context io_;
  HttpServer server_{io_, MakeLogger("http-test", spdlog::level::warn)};
  std::string address_;
  std::thread thread_;
};

TEST_F(HttpServerOnAThread, AnswersItsPathsAndRefusesTheRest) {
  auto r = testing::HttpGet(address_, "/hello?who=you");
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.body, "hi you");
  EXPECT_EQ(testing::HttpGet(address_, "/other").status, 404u);
}

TEST_F(HttpServerOnAThread, AHeaderPastTheLimitIsRefused) {
  asio::io_context io;
  tcp::socket s = Connect(io);
  const std::string request = "GET /hello HTTP/1.1\r\nHost: x\r\nX-Big: " +
                              std::string(HttpServer::kMaxHeaderBytes * 2, 'a') + "\r\n\r\n";
  error_code ec;
  asio::write(s, asio::buffer(request), ec);
  std::array<char, 128> answer{};
  const size_t n = s.read_some(asio::buffer(answer), ec);
  EXPECT_EQ(std::string(answer.data(), n).substr(0, 12), "HTTP/1.1 431");
}

TEST_F(HttpServerOnAThread, OnlyGetAndHead) {
  asio::io_context io;
  tcp::socket s = Connect(io);
  const std::string request =
      "DELETE /hello HTTP/1.1\r\nHost: x\r\n\r\nHEAD /hello HTTP/1.1\r\n"
      "Host: x\r\nConnection: close\r\n\r\n";
  asio::write(s, asio::buffer(request));
  std::string all;
  error_code ec;
  std::array<char, 1024> buf{};
  while (!ec) {
    const size_t n = s.read_some(asio::buffer(buf), ec);
    all.append(buf.data(), n);
  }
  EXPECT_EQ(all.substr(0, 12), "HTTP/1.1 405") << all;
  EXPECT_NE(all.find("Allow: GET, HEAD"), std::string::npos) << all;
  // The HEAD answer: the length of "hi ", no body.
  const size_t head = all.find("HTTP/1.1 200");
  ASSERT_NE(head, std::string::npos) << all;
  EXPECT_NE(all.find("Content-Length: 3", head), std::string::npos) << all;
  EXPECT_EQ(all.substr(all.size() - 4), "\r\n\r\n") << all;
}

}  // namespace
}  // namespace aiac::net
