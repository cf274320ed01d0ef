// The registry exchange's two ends (supernode/registry_delta.h): what a link sends each period,
// and what the receiving super-node makes of it. Against the simplest exchange there is, the
// whole registry every period: after any run of registrations, grants, heartbeats, releases
// and expiries, the receiver holds exactly what the sender's registry holds.
#include "supernode/registry_delta.h"

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <gtest/gtest.h>

#include <random>

namespace aiac::supernode {
namespace {

using std::chrono::milliseconds;
using Clock = PeerRegistry::Clock;

constexpr milliseconds kLate{2500};

DaemonView Daemon(int i, bool busy = false, milliseconds age = milliseconds(100)) {
  DaemonView v;
  v.record.id = "d" + std::to_string(i);
  v.record.address = "10.0.0." + std::to_string(i % 250) + ":" + std::to_string(7000 + i);
  v.record.cluster = "c" + std::to_string(i % 3);
  v.record.power = 1 + (i % 4);
  v.record.cores = 2;
  v.record.busy = busy;
  v.record.job = busy ? "job-1" : "";
  v.record.owner = "sn-a";
  v.record.version = "0.1.0";
  v.running = busy;
  v.heartbeat_age = age;
  return v;
}

net::JobStatus Job(const std::string& id, uint64_t iteration) {
  net::JobStatus j;
  j.id = id;
  j.app = "cg";
  j.phase = "running";
  j.tasks = 4;
  j.min_iteration = iteration;
  j.max_iteration = iteration;
  return j;
}

std::vector<std::string> Ids(const std::vector<DaemonView>& views) {
  std::vector<std::string> ids;
  for (const auto& v : views) ids.push_back(v.record.id);
  return ids;
}

// The changes as they cross the wire: encoded, framed, read back.
RegistryChanges OverTheWire(const RegistryChanges& c, size_t* bytes = nullptr) {
  capnp::MallocMessageBuilder message;
  ChangesToProto("sn-a", c, message.initRoot<proto::RegistryDelta>());
  if (bytes) *bytes = capnp::computeSerializedSizeInWords(message) * sizeof(capnp::word);
  return ChangesFromProto(message.getRoot<proto::RegistryDelta>().asReader());
}

TEST(RegistryDeltaTest, TheFirstMessageHoldsEverythingAndTheNextOnlyWhatChanged) {
  DeltaSender sender;
  std::vector<DaemonView> reg = {Daemon(1), Daemon(2), Daemon(3)};
  auto first = sender.Next(reg, {Job("j1", 5)}, kLate);
  EXPECT_TRUE(first.full);
  EXPECT_EQ(Ids(first.daemons), (std::vector<std::string>{"d1", "d2", "d3"}));
  EXPECT_EQ(first.jobs.size(), 1u);
  EXPECT_EQ(first.late, kLate);

  // Heartbeats alone (ages move, nobody becomes late) change nothing.
  for (auto& v : reg) v.heartbeat_age = milliseconds(900);
  auto quiet = sender.Next(reg, {Job("j1", 5)}, kLate);
  EXPECT_FALSE(quiet.full);
  EXPECT_TRUE(quiet.daemons.empty());
  EXPECT_TRUE(quiet.removed.empty());
  EXPECT_TRUE(quiet.jobs.empty());
  EXPECT_TRUE(quiet.ended_jobs.empty());

  // d2 granted, d3 expired, d4 registered, the job moved on and another started.
  reg = {Daemon(1), Daemon(2, true), Daemon(4)};
  auto changed = sender.Next(reg, {Job("j1", 9), Job("j2", 0)}, kLate);
  EXPECT_EQ(Ids(changed.daemons), (std::vector<std::string>{"d2", "d4"}));
  EXPECT_EQ(changed.removed, std::vector<std::string>{"d3"});
  ASSERT_EQ(changed.jobs.size(), 2u);
  EXPECT_EQ(changed.jobs[0].max_iteration, 9u);

  // d1 falls silent past the late line: sent with its age; on time again: sent again.
  reg[0].heartbeat_age = milliseconds(3000);
  auto late = sender.Next(reg, {Job("j2", 0)}, kLate);
  EXPECT_EQ(Ids(late.daemons), std::vector<std::string>{"d1"});
  EXPECT_EQ(late.daemons[0].heartbeat_age, milliseconds(3000));
  EXPECT_EQ(late.ended_jobs, std::vector<std::string>{"j1"});
  reg[0].heartbeat_age = milliseconds(3400);
  EXPECT_TRUE(sender.Next(reg, {Job("j2", 0)}, kLate).daemons.empty());
  reg[0].heartbeat_age = milliseconds(10);
  EXPECT_EQ(Ids(sender.Next(reg, {Job("j2", 0)}, kLate).daemons), std::vector<std::string>{"d1"});
  // A busy daemon whose task started (its heartbeat says it runs one) changed too.
  reg[1].running = false;
  EXPECT_EQ(Ids(sender.Next(reg, {Job("j2", 0)}, kLate).daemons), std::vector<std::string>{"d2"});
}

TEST(RegistryDeltaTest, AReceiverShowsLateAgesExactlyAndOnTimeOnesSinceItsPeersLastMessage) {
  PeerRegistry peer;
  const Clock::time_point t0 = Clock::now();
  RegistryChanges c;
  c.full = true;
  c.late = kLate;
  c.daemons = {Daemon(1, false, milliseconds(400)), Daemon(2, true, milliseconds(3000))};
  peer.Apply(c, t0);
  auto at1 = peer.Daemons(t0 + milliseconds(1000));
  ASSERT_EQ(at1.size(), 2u);
  EXPECT_EQ(at1[0].heartbeat_age, milliseconds(1000));  // vouched for 1 s ago
  EXPECT_EQ(at1[1].heartbeat_age, milliseconds(4000));  // exact, brought forward
  // An empty message vouches again for every on-time daemon.
  RegistryChanges empty;
  empty.late = kLate;
  peer.Apply(empty, t0 + milliseconds(1500));
  auto at2 = peer.Daemons(t0 + milliseconds(1600));
  EXPECT_EQ(at2[0].heartbeat_age, milliseconds(100));
  EXPECT_EQ(at2[1].heartbeat_age, milliseconds(4600));
  EXPECT_EQ(peer.free_count(), 1u);

  // A whole digest (an older peer's) is exact throughout.
  RegistryChanges digest;
  digest.full = true;
  digest.daemons = {Daemon(5, false, milliseconds(300))};
  peer.Apply(digest, t0 + milliseconds(2000));
  auto at3 = peer.Daemons(t0 + milliseconds(2500));
  ASSERT_EQ(Ids(at3), std::vector<std::string>{"d5"});
  EXPECT_EQ(at3[0].heartbeat_age, milliseconds(800));
  EXPECT_EQ(peer.free_count(), 1u);
}

TEST(RegistryDeltaTest, ARemovalOrChangeOfAnUnknownDaemonIsHarmless) {
  PeerRegistry peer;
  RegistryChanges c;
  c.removed = {"nobody"};
  c.ended_jobs = {"no-job"};
  c.daemons = {Daemon(7, true)};
  peer.Apply(c, Clock::now());
  EXPECT_EQ(peer.size(), 1u);
  EXPECT_EQ(peer.free_count(), 0u);
  c = {};
  c.daemons = {Daemon(7), Daemon(7)};  // twice in one message: counted once
  peer.Apply(c, Clock::now());
  EXPECT_EQ(peer.size(), 1u);
  EXPECT_EQ(peer.free_count(), 1u);
}

// Ages a peer could never have measured are read as bounds a clock can add to.
TEST(RegistryDeltaTest, AgesOutOfRangeAreReadAsBoundedOnes) {
  capnp::MallocMessageBuilder message;
  auto d = message.initRoot<proto::RegistryDelta>();
  d.setLateMs(-5);
  auto list = d.initDaemons(2);
  list[0].setId("d1");
  list[0].setHeartbeatAgeMs(INT64_MAX);
  list[1].setId("d2");
  list[1].setHeartbeatAgeMs(-7);
  const RegistryChanges c = ChangesFromProto(d.asReader());
  EXPECT_EQ(c.late, milliseconds(0));
  EXPECT_EQ(c.daemons[0].heartbeat_age, std::chrono::hours(24));
  EXPECT_EQ(c.daemons[1].heartbeat_age, milliseconds(0));
  PeerRegistry peer;
  const Clock::time_point t0 = Clock::now();
  peer.Apply(c, t0);
  EXPECT_EQ(peer.Daemons(t0 + milliseconds(5))[0].heartbeat_age,
            std::chrono::hours(24) + milliseconds(5));
}

// Random registries changing over 300 periods, each message across the wire: after every one
// the receiver holds what the whole registry would have told it, and its free count is right.
TEST(RegistryDeltaTest, AfterAnyRunOfChangesTheReceiverHoldsTheSendersRegistry) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::mt19937 rng(seed);
    std::map<int, DaemonView> reg;
    std::map<std::string, net::JobStatus> jobs;
    DeltaSender sender;
    PeerRegistry peer;
    int next = 0;
    Clock::time_point now = Clock::now();
    for (int period = 0; period < 300; ++period) {
      const int steps = static_cast<int>(rng() % 6);
      for (int s = 0; s < steps; ++s) {
        switch (rng() % 6) {
          case 0:
            reg[next] = Daemon(next);
            ++next;
            break;
          case 1:  // expiry or deregistration
            if (!reg.empty()) reg.erase(std::next(reg.begin(), rng() % reg.size()));
            break;
          case 2:  // grant or release
            if (!reg.empty()) {
              auto& v = std::next(reg.begin(), rng() % reg.size())->second;
              v = Daemon(std::stoi(v.record.id.substr(1)), !v.record.busy);
            }
            break;
          case 3:  // a heartbeat, late or not
            if (!reg.empty()) {
              std::next(reg.begin(), rng() % reg.size())->second.heartbeat_age =
                  milliseconds(rng() % 5000);
            }
            break;
          case 4: {
            const std::string id = "j" + std::to_string(rng() % 4);
            jobs[id] = Job(id, rng() % 100);
            break;
          }
          case 5:
            jobs.erase("j" + std::to_string(rng() % 4));
            break;
        }
      }
      std::vector<DaemonView> views;
      for (const auto& [i, v] : reg) views.push_back(v);
      std::vector<net::JobStatus> job_list;
      for (const auto& [id, j] : jobs) job_list.push_back(j);
      peer.Apply(OverTheWire(sender.Next(views, job_list, kLate)), now);
      now += milliseconds(500);

      auto held = peer.Daemons(now);
      std::sort(views.begin(), views.end(),
                [](const DaemonView& a, const DaemonView& b) { return a.record.id < b.record.id; });
      ASSERT_EQ(held.size(), views.size()) << "seed " << seed << " period " << period;
      size_t free = 0;
      for (size_t k = 0; k < views.size(); ++k) {
        EXPECT_EQ(held[k].record, views[k].record) << "seed " << seed << " period " << period;
        EXPECT_EQ(held[k].running, views[k].running);
        if (!views[k].record.busy) ++free;
      }
      EXPECT_EQ(peer.free_count(), free);
      ASSERT_EQ(peer.jobs().size(), jobs.size());
      for (const auto& [id, j] : jobs) EXPECT_EQ(peer.jobs().at(id), j);
    }
  }
}

// What the exchange is for: 1,000 daemons of which 10 change in a period cost a peer a small
// part of the whole registry's bytes.
TEST(RegistryDeltaTest, TenChangesAmongAThousandDaemonsCostLittleOfTheWholeRegistry) {
  std::vector<DaemonView> reg;
  for (int i = 0; i < 1000; ++i) reg.push_back(Daemon(i));
  DeltaSender sender;
  size_t full = 0, delta = 0;
  OverTheWire(sender.Next(reg, {}, kLate), &full);
  for (int i = 0; i < 10; ++i) reg[static_cast<size_t>(i * 97)].record.busy = true;
  OverTheWire(sender.Next(reg, {}, kLate), &delta);
  EXPECT_LT(delta * 50, full) << delta << " of " << full << " bytes";
}

}  // namespace
}  // namespace aiac::supernode
