// App plugins as daemons receive them: stored by hash, reused, and refused when the bytes do
// not match the hash.
#include "aiac/plugin.h"
#include "core/endpoint.h"
#include "integration/cluster_fixture.h"
#include "net/connection.h"

namespace aiac::testing {
namespace {

using PluginTest = ClusterFixture;

TEST_F(PluginTest, SecondJobReusesTheStoredPlugin) {
  const std::string sn = StartSupernode("sn1");
  for (auto d : {"d1", "d2"}) StartDaemon(d, {sn});
  const std::string job = RingJob(2, 10);
  ASSERT_EQ(RunSpawner({"run", "--config", dir_ / "key.toml", "--supernode", sn, job}, "first"), 0) << Log("first");
  EXPECT_NE(Log("first").find("sending plugin"), std::string::npos) << Log("first");
  ASSERT_EQ(RunSpawner({"run", "--config", dir_ / "key.toml", "--supernode", sn, job}, "second"), 0) << Log("second");
  EXPECT_EQ(Log("second").find("sending plugin"), std::string::npos) << Log("second");
  // Stored under the daemon's data directory, named by hash.
  auto bytes = runtime::ReadWholeFile(BinPath("../plugins/libaiac_app_ring.so"));
  ASSERT_TRUE(bytes.ok());
  EXPECT_TRUE(std::filesystem::exists(dir_ / ("d1/plugins/" + runtime::Hex(runtime::Sha256(*bytes)) + ".so")));
}

TEST_F(PluginTest, PluginWhoseHashDoesNotMatchIsRefused) {
  const std::string sn = StartSupernode("sn1");
  StartDaemon("d1", {sn});
  ASSERT_TRUE(WaitUntil([&] { return LogHas("d1", "listening on"); })) << Log("d1");
  const std::string log = Log("d1");
  const std::string addr = log.substr(log.find("listening on ") + 13, log.find(' ', log.find("listening on ") + 13) -
                                                                         (log.find("listening on ") + 13));
  auto ep = ParseEndpoint(addr);
  ASSERT_TRUE(ep.ok()) << addr;

  net::asio::io_context io;
  net::NetOptions opts;
  opts.cluster_key = kClusterKey;
  const std::string claimed = runtime::Sha256("the real plugin");
  std::vector<std::string> replies;
  net::asio::co_spawn(io, [&]() -> net::awaitable<void> {
    auto conn = co_await net::Dial(*ep, opts, proto::Role::SPAWNER, "test-spawner", proto::Role::DAEMON);
    if (!conn.ok()) co_return;
    (*conn)->SendEnvelope([&](proto::Envelope::Builder e) {
      auto a = e.initAssignTask();
      a.setJob("j");
      a.setTask(0);
      a.setTaskCount(2);
      a.setApp("ring");
      a.setPluginHash(kj::arrayPtr(reinterpret_cast<const kj::byte*>(claimed.data()), claimed.size()));
    });
    for (int i = 0; i < 2; ++i) {
      auto msg = co_await (*conn)->Receive();
      if (!msg.ok()) co_return;
      auto r = (*msg)->root().getTaskReady();
      replies.push_back(r.getNeedPlugin() ? "need-plugin" : r.getError().cStr());
      if (r.getNeedPlugin()) {
        const std::string other = "not the real plugin";
        (*conn)->SendEnvelope([&](proto::Envelope::Builder e) {
          auto pd = e.initPluginData();
          pd.setSha256(kj::arrayPtr(reinterpret_cast<const kj::byte*>(claimed.data()), claimed.size()));
          pd.setBytes(kj::arrayPtr(reinterpret_cast<const kj::byte*>(other.data()), other.size()));
        });
      }
    }
    (*conn)->Close();
  }, net::asio::detached);
  io.run_for(std::chrono::seconds(10));
  ASSERT_EQ(replies.size(), 2u);
  EXPECT_EQ(replies[0], "need-plugin");
  EXPECT_NE(replies[1].find("plugin hash mismatch"), std::string::npos) << replies[1];
  EXPECT_TRUE(LogHas("d1", "plugin hash mismatch")) << Log("d1");
}

}  // namespace
}  // namespace aiac::testing
