// The daemon's checkpoint service on the in-memory store, with real connections over loopback
// between certified daemons: who may store and fetch which task's checkpoints (the capabilities
// of checkpoint/proof.h), forged, altered and replayed checkpoints, acknowledgements, and
// cleanup when a job ends.
#include "daemon/checkpoint_service.h"

#include <capnp/message.h>
#include <gtest/gtest.h>

#include <map>

#include "checkpoint/memory_checkpoint_store.h"
#include "checkpoint/proof_wire.h"
#include "net/capnp_bytes.h"
#include "support/identities.h"
#include "support/loopback.h"
#include "support/test_support.h"

namespace aiac::daemon {
namespace {

namespace asio = net::asio;
using checkpoint::MakeCheckpoint;
using checkpoint::TaskCapability;

constexpr const char* kKey = "checkpoint-service-test-key-0123";

class CheckpointServiceTest : public ::testing::Test {
 protected:
  CheckpointServiceTest() : spawner_(*Ed25519Key::Generate()) {
    auto owned = std::make_unique<checkpoint::MemoryCheckpointStore>();
    store_ = owned.get();
    service_ = std::make_unique<CheckpointService>(io_, std::move(owned),
                                                   MakeLogger("test", spdlog::level::off));
    service_->Host("job", spawner_.PublicKey(), {{1, "d1"}, {2, "d2"}});
  }

  // The identity of daemon `id` (made at the first call).
  const net::NodeIdentity& Daemon(const std::string& id) {
    auto& identity = identities_[id];
    if (!identity) identity = authority_.Identity(id, proto::Role::DAEMON);
    return *identity;
  }

  // A connection from daemon `peer` as this daemon ("me") sees it, and the peer's end.
  std::pair<net::ConnectionPtr, net::ConnectionPtr> From(const std::string& peer) {
    auto [a, b] = testing::ConnectLoopback(io_);
    net::NetOptions theirs_options, mine_options;
    theirs_options.cluster_key = mine_options.cluster_key = kKey;
    theirs_options.identity = identities_[peer] = authority_.Identity(peer, proto::Role::DAEMON);
    mine_options.identity = authority_.Identity("me", proto::Role::DAEMON);
    auto theirs = net::Connection::Create(std::move(a), theirs_options, net::Side::kClient);
    auto mine = net::Connection::Create(std::move(b), mine_options, net::Side::kServer);
    auto [x, y] = testing::HandshakeBoth(io_, {theirs, proto::Role::DAEMON, peer},
                                         {mine, proto::Role::DAEMON, "me"});
    EXPECT_TRUE(x.ok() && y.ok()) << x.ToString() << " / " << y.ToString();
    return {mine, theirs};
  }

  // The job's spawner's capability for `daemon` to run `incarnation` of `task`.
  TaskCapability Capability(const std::string& daemon, uint32_t task, uint64_t incarnation) {
    return checkpoint::GrantCapability(spawner_, "job", task, incarnation, daemon,
                                       Daemon(daemon).key.PublicKey());
  }

  // `c` signed by `daemon` under its capability for c's task and incarnation.
  checkpoint::Checkpoint Signed(const std::string& daemon, checkpoint::Checkpoint c) {
    c.proof = checkpoint::EncodeProof(checkpoint::ProveCheckpoint(
        Daemon(daemon).key, Capability(daemon, c.task, c.incarnation), c));
    return c;
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
    if (!c.proof.empty()) checkpoint::FillProof(*checkpoint::DecodeProof(c.proof), p.initProof());
    return service_->OnPut(mine, p.asReader());
  }

  bool Get(const net::ConnectionPtr& mine, const std::string& job, uint32_t task,
           const std::optional<TaskCapability>& capability) {
    capnp::MallocMessageBuilder m;
    auto g = m.initRoot<proto::CheckpointGet>();
    g.setJob(job);
    g.setTask(task);
    if (capability) checkpoint::FillCapability(*capability, g.initCapability());
    return service_->OnGet(mine, g.asReader());
  }

  // The next message `theirs` receives; null when the connection closed first.
  std::unique_ptr<net::IncomingMessage> Next(const net::ConnectionPtr& theirs) {
    std::optional<Result<std::unique_ptr<net::IncomingMessage>>> got;
    asio::co_spawn(
        io_, [&]() -> net::awaitable<void> { got = co_await theirs->Receive(); }, asio::detached);
    EXPECT_TRUE(testing::RunIoUntil(io_, [&] { return got.has_value(); }));
    if (!got || !got->ok()) return nullptr;
    return std::move(**got);
  }

  // Whether `theirs` is refused: a Refuse comes, then the connection closes.
  bool Refused(const net::ConnectionPtr& theirs) {
    auto msg = Next(theirs);
    if (!msg || !msg->root().isRefuse()) return false;
    return Next(theirs) == nullptr;
  }

  testing::TestAuthority authority_;
  Ed25519Key spawner_;
  std::map<std::string, std::shared_ptr<const net::NodeIdentity>> identities_;
  asio::io_context io_;
  checkpoint::MemoryCheckpointStore* store_;
  std::unique_ptr<CheckpointService> service_;
};

TEST_F(CheckpointServiceTest, TheNamedDaemonStoresAndFetchesItsTasksCheckpoints) {
  auto [mine, theirs] = From("d1");
  ASSERT_TRUE(Put(mine, Signed("d1", MakeCheckpoint("job", 1, 1, 10, "state at 10"))));
  auto ack = Next(theirs);
  ASSERT_TRUE(ack && ack->root().isCheckpointAck());
  EXPECT_TRUE(ack->root().getCheckpointAck().getStored());
  EXPECT_EQ(ack->root().getCheckpointAck().getIteration(), 10u);
  EXPECT_EQ(service_->stored(), 1u);

  ASSERT_TRUE(Put(mine, Signed("d1", MakeCheckpoint("job", 1, 1, 20, "state at 20"))));
  ASSERT_TRUE(Next(theirs));
  ASSERT_TRUE(Get(mine, "job", 1, Capability("d1", 1, 1)));
  auto data = Next(theirs);
  ASSERT_TRUE(data && data->root().isCheckpointData());
  auto d = data->root().getCheckpointData();
  EXPECT_TRUE(d.getFound());
  EXPECT_EQ(d.getIteration(), 20u);
  EXPECT_EQ(net::AsString(d.getState()), "state at 20");
  EXPECT_EQ(d.getChecksum(), Crc32c("state at 20"));
  // It comes with the proof its daemon made: a restoring daemon can check it.
  checkpoint::Checkpoint got{"job", 1, 1, 20, "state at 20", d.getChecksum(), ""};
  EXPECT_OK(
      checkpoint::VerifyCheckpoint(got, checkpoint::ReadProof(d.getProof()), spawner_.PublicKey()));

  // The newest damaged on this daemon's disk: the older one is served.
  store_->Kept("job", 1).back().state[0] ^= 1;
  ASSERT_TRUE(Get(mine, "job", 1, Capability("d1", 1, 1)));
  data = Next(theirs);
  ASSERT_TRUE(data);
  EXPECT_EQ(data->root().getCheckpointData().getIteration(), 10u);
}

TEST_F(CheckpointServiceTest, OthersMayNeitherWriteNorReadATasksCheckpoints) {
  auto [d1, d1_end] = From("d1");
  auto [d9, d9_end] = From("d9");
  // No proof at all; d1 writing d2's task with a capability for its own; d9 showing d1's
  // capability (it names d1 and d1's key); d9 with a capability it signed itself.
  EXPECT_FALSE(Put(d9, MakeCheckpoint("job", 1, 1, 5, "unsigned")));
  auto wrong_task = MakeCheckpoint("job", 2, 1, 5, "d2's task, written by d1");
  wrong_task.proof = checkpoint::EncodeProof(
      checkpoint::ProveCheckpoint(Daemon("d1").key, Capability("d1", 1, 1), wrong_task));
  EXPECT_FALSE(Put(d1, wrong_task));
  auto borrowed = MakeCheckpoint("job", 1, 1, 5, "not d9's");
  borrowed.proof = checkpoint::EncodeProof(
      checkpoint::ProveCheckpoint(Daemon("d9").key, Capability("d1", 1, 1), borrowed));
  EXPECT_FALSE(Put(d9, borrowed));
  auto self_made = MakeCheckpoint("job", 1, 5, 5, "d9 grants itself");
  self_made.proof = checkpoint::EncodeProof(
      checkpoint::ProveCheckpoint(Daemon("d9").key,
                                  checkpoint::GrantCapability(Daemon("d9").key, "job", 1, 5, "d9",
                                                              Daemon("d9").key.PublicKey()),
                                  self_made));
  EXPECT_FALSE(Put(d9, self_made));
  service_->Drain();
  EXPECT_TRUE(store_->Load("job", 1)->valid.empty());
  EXPECT_TRUE(store_->Load("job", 2)->valid.empty());
  // Reading: without a capability, or with another daemon's, "not found" and why.
  for (const auto& capability :
       {std::optional<TaskCapability>(), std::optional(Capability("d1", 1, 1))}) {
    ASSERT_TRUE(Get(d9, "job", 1, capability));
    auto data = Next(d9_end);
    ASSERT_TRUE(data && data->root().isCheckpointData());
    EXPECT_FALSE(data->root().getCheckpointData().getFound());
    EXPECT_NE(std::string(data->root().getCheckpointData().getError().cStr()).find("may not read"),
              std::string::npos);
  }
  // A job this daemon does not host: dropped quietly (a late put of a job that ended), and a
  // fetch is told "not found" so that the asker tries another backup.
  EXPECT_TRUE(Put(d9, MakeCheckpoint("other-job", 1, 1, 5, "late")));
  EXPECT_TRUE(Get(d9, "other-job", 1, std::nullopt));
  auto data = Next(d9_end);
  ASSERT_TRUE(data && data->root().isCheckpointData());
  EXPECT_FALSE(data->root().getCheckpointData().getFound());
  service_->Drain();
  EXPECT_EQ(*store_->Jobs(), std::vector<std::string>{});
}

TEST_F(CheckpointServiceTest, AForgedOrAlteredCheckpointIsRefusedAndItsConnectionClosed) {
  // The attack of a key holder before identities: a later iteration, a recomputed checksum.
  // Signed by the task's daemon first, then altered: the signature no longer matches.
  auto [mine, theirs] = From("d1");
  auto c = Signed("d1", MakeCheckpoint("job", 1, 1, 7, "the genuine state"));
  c.state = "a forged state";
  c.iteration = 1000;
  c.checksum = Crc32c(c.state);
  EXPECT_TRUE(Put(mine, c));  // its capability holds: the signature is checked with the write
  EXPECT_TRUE(Refused(theirs));
  service_->Drain();
  EXPECT_TRUE(store_->Load("job", 1)->valid.empty());
}

TEST_F(CheckpointServiceTest, ANewerIncarnationRetiresTheOlderForWritingAndReading) {
  auto [d1, d1_end] = From("d1");
  auto [d7, d7_end] = From("d7");
  ASSERT_TRUE(Put(d1, Signed("d1", MakeCheckpoint("job", 1, 1, 10, "ten"))));
  ASSERT_TRUE(Next(d1_end));
  // Task 1 replaced onto d7 (incarnation 2): its capability says so, before any NeighbourMoved.
  ASSERT_TRUE(Get(d7, "job", 1, Capability("d7", 1, 2)));
  auto data = Next(d7_end);
  ASSERT_TRUE(data && data->root().isCheckpointData());
  EXPECT_TRUE(data->root().getCheckpointData().getFound());
  EXPECT_EQ(net::AsString(data->root().getCheckpointData().getState()), "ten");
  // d1, come back from a pause, may no longer write (a replay of its incarnation) nor read.
  EXPECT_FALSE(Put(d1, Signed("d1", MakeCheckpoint("job", 1, 1, 11, "from the replaced one"))));
  auto [d1_again, d1_again_end] = From("d1");
  ASSERT_TRUE(Get(d1_again, "job", 1, Capability("d1", 1, 1)));
  data = Next(d1_again_end);
  ASSERT_TRUE(data);
  EXPECT_FALSE(data->root().getCheckpointData().getFound());
  // The spawner's NeighbourMoved of a third incarnation retires d7 in turn.
  service_->Moved(1, "d8", 3);
  EXPECT_FALSE(Put(d7, Signed("d7", MakeCheckpoint("job", 1, 2, 12, "retired too"))));
}

TEST_F(CheckpointServiceTest, EndingTheJobDeletesItsCheckpointsAndANewJobDropsOldOnes) {
  auto [mine, theirs] = From("d1");
  ASSERT_TRUE(Put(mine, Signed("d1", MakeCheckpoint("job", 1, 1, 1, "x"))));
  ASSERT_TRUE(Next(theirs));
  service_->EndJob("job");
  service_->Drain();
  EXPECT_TRUE(store_->Jobs()->empty());
  // Left over from a job whose end this daemon never saw (it was restarted): gone once a new
  // job is hosted.
  ASSERT_TRUE(*store_->Put(MakeCheckpoint("stale", 0, 1, 1, "y")));
  service_->Host("next", spawner_.PublicKey(), {{0, "d1"}});
  service_->Drain();
  EXPECT_TRUE(store_->Jobs()->empty());
  EXPECT_TRUE(Put(mine, Signed("d1", MakeCheckpoint("job", 1, 1, 2, "the old job ended"))));
  service_->Drain();
  EXPECT_TRUE(store_->Jobs()->empty());
}

}  // namespace
}  // namespace aiac::daemon
