// Wrong keys and hostile bytes: refused with a reason, and the super-node keeps serving.
#include "core/endpoint.h"
#include "integration/cluster_fixture.h"
#include "net/asio.h"

namespace aiac::testing {
namespace {

using AuthTest = ClusterFixture;

TEST_F(AuthTest, DaemonWithWrongKeyIsRefusedAndSaysSo) {
  const std::string sn = StartSupernode("sn1");
  StartDaemon("intruder", {sn}, "wrong.toml");
  auto code = procs_.at("intruder").WaitFor(std::chrono::seconds(15));
  ASSERT_TRUE(code.has_value()) << "daemon with a wrong key kept running";
  EXPECT_EQ(*code, 2);
  EXPECT_TRUE(LogHas("intruder", "cluster_key mismatch")) << Log("intruder");
  EXPECT_TRUE(LogHas("sn1", "refused connection")) << Log("sn1");
  EXPECT_TRUE(LogHas("sn1", "cluster_key mismatch")) << Log("sn1");
  EXPECT_FALSE(LogHas("sn1", "daemon intruder registered"));
  // The super-node still serves everyone else.
  StartDaemon("d1", {sn});
  EXPECT_TRUE(WaitUntil([&] { return LogHas("sn1", "daemon d1 registered"); })) << Log("sn1");
}

TEST_F(AuthTest, SpawnerWithWrongKeyFailsWithTheReason) {
  const std::string sn = StartSupernode("sn1");
  ASSERT_EQ(RunSpawner({"run", "--config", dir_ / "wrong.toml", "--supernode", sn, RingJob(2, 1),
                        "--json", dir_ / "w.json"}),
            1);
  EXPECT_NE(Json("w.json")["error"].get<std::string>().find("cluster_key mismatch"),
            std::string::npos);
}

TEST_F(AuthTest, GarbageAndOversizedFramesDoNotDisturbOthers) {
  const std::string sn = StartSupernode("sn1");
  for (auto d : {"d1", "d2"}) StartDaemon(d, {sn});
  auto ep = ParseEndpoint(sn);
  ASSERT_TRUE(ep.ok());
  net::asio::io_context io;
  auto target = net::tcp::endpoint(net::asio::ip::make_address(ep->host), ep->port);
  {
    net::tcp::socket s(io);
    s.connect(target);
    const char junk[] = "\x01\x02\x03\x04garbage garbage garbage garbage";
    net::asio::write(s, net::asio::buffer(junk, sizeof junk - 1));
  }
  {
    net::tcp::socket s(io);
    s.connect(target);
    uint32_t header[2] = {0, 0x7fffffff};  // one segment of 16 GiB
    net::asio::write(s, net::asio::buffer(header, sizeof header));
    char byte;
    net::error_code ec;
    s.read_some(net::asio::buffer(&byte, 1), ec);  // the super-node answers by closing
    while (!ec) s.read_some(net::asio::buffer(&byte, 1), ec);
  }
  // Both are refused by the TLS layer before any frame is read.
  EXPECT_TRUE(WaitUntil([&] { return LogHas("sn1", "TLS handshake failed"); })) << Log("sn1");
  ASSERT_EQ(RunSpawner({"run", "--config", dir_ / "key.toml", "--supernode", sn, RingJob(2, 20),
                        "--json", dir_ / "ok.json"}),
            0)
      << Log("spawner");
  EXPECT_EQ(Json("ok.json")["status"], "converged");
}

}  // namespace
}  // namespace aiac::testing
