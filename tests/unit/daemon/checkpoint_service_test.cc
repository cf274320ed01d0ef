// The daemon's checkpoint service on the in-memory store, with real connections over loopback:
// who may store and fetch which task's checkpoints, acknowledgements, damaged checkpoints, and
// cleanup when a job ends.
#include "daemon/checkpoint_service.h"

#include <capnp/message.h>
#include <gtest/gtest.h>

#include "checkpoint/memory_checkpoint_store.h"
#include "net/capnp_bytes.h"
#include "support/loopback.h"
#include "support/test_support.h"

namespace aiac::daemon {
namespace {

namespace asio = net::asio;
using checkpoint::MakeCheckpoint;

net::NetOptions Options() {
  net::NetOptions o;
  o.cluster_key = "checkpoint-service-test-key-0123";
  o.handshake_timeout = std::chrono::milliseconds(10000);
  return o;
}

class CheckpointServiceTest : public ::testing::Test {
 protected:
  CheckpointServiceTest() {
    auto owned = std::make_unique<checkpoint::MemoryCheckpointStore>();
    store_ = owned.get();
    service_ = std::make_unique<CheckpointService>(io_, std::move(owned),
                                                   MakeLogger("test", spdlog::level::off));
    service_->Host("job", {{1, "d1"}, {2, "d2"}});
  }

  // A connection from daemon `peer` as this daemon ("me") sees it, and the peer's end.
  std::pair<net::ConnectionPtr, net::ConnectionPtr> From(const std::string& peer) {
    auto [a, b] = testing::ConnectLoopback(io_);
    auto theirs = net::Connection::Create(std::move(a), Options(), net::Side::kClient);
    auto mine = net::Connection::Create(std::move(b), Options(), net::Side::kServer);
    auto [x, y] = testing::HandshakeBoth(io_, {theirs, proto::Role::DAEMON, peer},
                                         {mine, proto::Role::DAEMON, "me"});
    EXPECT_TRUE(x.ok() && y.ok()) << x.ToString() << " / " << y.ToString();
    return {mine, theirs};
  }

  bool Put(const net::ConnectionPtr& mine, const checkpoint::Checkpoint& c) {
    capnp::MallocMessageBuilder m;
    auto p = m.initRoot<proto::CheckpointPut>();
    p.setJob(c.job);
    p.setTask(c.task);
    p.setIncarnation(c.incarnation);
    p.setIteration(c.iteration);
    p.setChecksum(c.checksum);
    p.setState(net::AsBytes(c.state));
    return service_->OnPut(mine, p.asReader());
  }

  bool Get(const net::ConnectionPtr& mine, const std::string& job, uint32_t task) {
    capnp::MallocMessageBuilder m;
    auto g = m.initRoot<proto::CheckpointGet>();
    g.setJob(job);
    g.setTask(task);
    return service_->OnGet(mine, g.asReader());
  }

  // The next message `theirs` receives.
  std::unique_ptr<net::IncomingMessage> Next(const net::ConnectionPtr& theirs) {
    std::optional<Result<std::unique_ptr<net::IncomingMessage>>> got;
    asio::co_spawn(
        io_, [&]() -> net::awaitable<void> { got = co_await theirs->Receive(); }, asio::detached);
    EXPECT_TRUE(testing::RunIoUntil(io_, [&] { return got.has_value(); }));
    if (!got || !got->ok()) return nullptr;
    return std::move(**got);
  }

  asio::io_context io_;
  checkpoint::MemoryCheckpointStore* store_;
  std::unique_ptr<CheckpointService> service_;
};

TEST_F(CheckpointServiceTest, TheNamedDaemonStoresAndFetchesItsTasksCheckpoints) {
  auto [mine, theirs] = From("d1");
  ASSERT_TRUE(Put(mine, MakeCheckpoint("job", 1, 1, 10, "state at 10")));
  auto ack = Next(theirs);
  ASSERT_TRUE(ack && ack->root().isCheckpointAck());
  EXPECT_TRUE(ack->root().getCheckpointAck().getStored());
  EXPECT_EQ(ack->root().getCheckpointAck().getIteration(), 10u);
  EXPECT_EQ(service_->stored(), 1u);

  ASSERT_TRUE(Put(mine, MakeCheckpoint("job", 1, 1, 20, "state at 20")));
  ASSERT_TRUE(Next(theirs));
  ASSERT_TRUE(Get(mine, "job", 1));
  auto data = Next(theirs);
  ASSERT_TRUE(data && data->root().isCheckpointData());
  auto d = data->root().getCheckpointData();
  EXPECT_TRUE(d.getFound());
  EXPECT_EQ(d.getIteration(), 20u);
  EXPECT_EQ(net::AsString(d.getState()), "state at 20");
  EXPECT_EQ(d.getChecksum(), Crc32c("state at 20"));

  // The newest damaged on this daemon's disk: the older one is served.
  store_->Kept("job", 1).back().state[0] ^= 1;
  ASSERT_TRUE(Get(mine, "job", 1));
  data = Next(theirs);
  ASSERT_TRUE(data);
  EXPECT_EQ(data->root().getCheckpointData().getIteration(), 10u);
}

TEST_F(CheckpointServiceTest, OthersMayNeitherWriteNorReadATasksCheckpoints) {
  auto [d1, d1_end] = From("d1");
  auto [d9, d9_end] = From("d9");
  EXPECT_FALSE(Put(d1, MakeCheckpoint("job", 2, 1, 5, "d2's task, written by d1")));
  EXPECT_FALSE(Put(d9, MakeCheckpoint("job", 1, 1, 5, "not d9's")));
  service_->Drain();
  EXPECT_TRUE(store_->Load("job", 1)->valid.empty());
  EXPECT_TRUE(store_->Load("job", 2)->valid.empty());
  // A job this daemon does not host: dropped quietly (a late put of a job that ended), and a
  // fetch is told "not found" so that the asker tries another backup.
  EXPECT_TRUE(Put(d9, MakeCheckpoint("other-job", 1, 1, 5, "late")));
  EXPECT_TRUE(Get(d9, "other-job", 1));
  auto data = Next(d9_end);
  ASSERT_TRUE(data && data->root().isCheckpointData());
  EXPECT_FALSE(data->root().getCheckpointData().getFound());
  service_->Drain();
  EXPECT_EQ(*store_->Jobs(), std::vector<std::string>{});
}

TEST_F(CheckpointServiceTest, OnlyTheTasksDaemonReadsItsCheckpointsAndAMovedTaskChangesWho) {
  auto [d1, d1_end] = From("d1");
  auto [d7, d7_end] = From("d7");
  ASSERT_TRUE(Put(d1, MakeCheckpoint("job", 1, 1, 10, "ten")));
  ASSERT_TRUE(Next(d1_end));
  ASSERT_TRUE(Get(d7, "job", 1));
  auto data = Next(d7_end);
  ASSERT_TRUE(data && data->root().isCheckpointData());
  EXPECT_FALSE(data->root().getCheckpointData().getFound());
  EXPECT_EQ(data->root().getCheckpointData().getState().size(), 0u);
  EXPECT_NE(
      std::string(data->root().getCheckpointData().getError().cStr()).find("does not run task 1"),
      std::string::npos);
  // Task 1 replaced onto d7: d7 may read (and write) it now, d1 may not write any more.
  service_->Moved(1, "d7");
  ASSERT_TRUE(Get(d7, "job", 1));
  data = Next(d7_end);
  ASSERT_TRUE(data);
  EXPECT_TRUE(data->root().getCheckpointData().getFound());
  EXPECT_EQ(net::AsString(data->root().getCheckpointData().getState()), "ten");
  EXPECT_FALSE(Put(d1, MakeCheckpoint("job", 1, 1, 11, "from the replaced daemon")));
}

TEST_F(CheckpointServiceTest, ADamagedPutIsRefusedWithTheReason) {
  auto [mine, theirs] = From("d1");
  auto c = MakeCheckpoint("job", 1, 1, 3, "abc");
  c.state = "abd";
  ASSERT_TRUE(Put(mine, c));
  auto ack = Next(theirs);
  ASSERT_TRUE(ack);
  EXPECT_FALSE(ack->root().getCheckpointAck().getStored());
  EXPECT_NE(std::string(ack->root().getCheckpointAck().getError().cStr()).find("checksum"),
            std::string::npos);
}

TEST_F(CheckpointServiceTest, EndingTheJobDeletesItsCheckpointsAndANewJobDropsOldOnes) {
  auto [mine, theirs] = From("d1");
  ASSERT_TRUE(Put(mine, MakeCheckpoint("job", 1, 1, 1, "x")));
  ASSERT_TRUE(Next(theirs));
  service_->EndJob("job");
  service_->Drain();
  EXPECT_TRUE(store_->Jobs()->empty());
  // Left over from a job whose end this daemon never saw (it was restarted): gone once a new
  // job is hosted.
  ASSERT_TRUE(*store_->Put(MakeCheckpoint("stale", 0, 1, 1, "y")));
  service_->Host("next", {{0, "d1"}});
  service_->Drain();
  EXPECT_TRUE(store_->Jobs()->empty());
  EXPECT_TRUE(Put(mine, MakeCheckpoint("job", 1, 1, 2, "the old job ended")));
  service_->Drain();
  EXPECT_TRUE(store_->Jobs()->empty());
}

}  // namespace
}  // namespace aiac::daemon
