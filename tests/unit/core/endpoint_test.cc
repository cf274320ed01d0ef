#include "core/endpoint.h"

#include <gtest/gtest.h>

namespace aiac {
namespace {

TEST(EndpointTest, ParsesHostAndPort) {
  auto ep = ParseEndpoint("127.0.0.1:7400");
  ASSERT_TRUE(ep.ok());
  EXPECT_EQ(ep->host, "127.0.0.1");
  EXPECT_EQ(ep->port, 7400);
  EXPECT_EQ(ep->ToString(), "127.0.0.1:7400");
  auto v6 = ParseEndpoint("[::1]:0");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
}

TEST(EndpointTest, RefusesMalformed) {
  for (const char* bad : {"", "host", ":80", "h:", "h:x", "h:70000", "h:-1", "h:80x"}) {
    auto ep = ParseEndpoint(bad);
    EXPECT_FALSE(ep.ok()) << bad;
    if (!ep.ok()) {
      EXPECT_NE(ep.status().message().find("HOST:PORT"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace aiac
