#include "spawner/federation_status.h"

#include <capnp/message.h>
#include <gtest/gtest.h>

#include <cmath>

#include "spawner/text_table.h"

namespace aiac::spawner {
namespace {

net::JobStatus Job() {
  net::JobStatus j;
  j.id = "long-1a2b3c";
  j.app = "cg";
  j.spawner_id = "alice";
  j.spawner_address = "10.0.0.5:41234";
  j.supernode = "sn1";
  j.tasks = 2;
  j.daemons = 3;
  j.started_unix = 1795719213;
  j.phase = "running";
  j.min_iteration = 12;
  j.max_iteration = 58;
  j.max_change = 0.25;
  j.failures = 1;
  j.replacements = 1;
  j.moves = 4;
  j.eta_seconds = 42.5;
  j.task_list = {{0, "d1", 12, 0.25, 2, 7, 150}, {1, "d2", 58, 0.125, 1, 9, -1}};
  return j;
}

void AddDaemon(capnp::List<proto::DaemonInfo>::Builder list, unsigned i, const std::string& id,
               bool busy, bool running, const std::string& job) {
  auto d = list[i];
  d.setId(id);
  d.setAddress("127.0.0.1:700" + std::to_string(i));
  d.setCluster("c");
  d.setPower(2);
  d.setCores(4);
  d.setState(busy ? proto::DaemonState::BUSY : proto::DaemonState::FREE);
  d.setJob(job);
  d.setOwner("sn1");
  d.setVersion("0.1.0");
  d.setRunning(running);
  d.setHeartbeatAgeMs(1500);
}

TEST(JobStatusTest, RoundTripsAndRefusesWhatIsNotAStatus) {
  capnp::MallocMessageBuilder message;
  auto b = message.initRoot<proto::JobStatus>();
  net::ToProto(Job(), b);
  auto back = net::FromProto(b.asReader());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, Job());

  b.setMaxChange(std::nan(""));
  EXPECT_EQ(net::FromProto(b.asReader()).status().code(), StatusCode::kInvalidArgument);
  b.setMaxChange(1);
  b.setId("bad id\n");
  EXPECT_EQ(net::FromProto(b.asReader()).status().code(), StatusCode::kInvalidArgument);
}

TEST(FederationStatusTest, StatesTasksAndJson) {
  capnp::MallocMessageBuilder message;
  auto r = message.initRoot<proto::StatusReport>();
  r.setSupernodeId("sn1");
  r.initPeers(1).set(0, "sn2");
  auto daemons = r.initDaemons(3);
  AddDaemon(daemons, 0, "d1", true, true, "long-1a2b3c");
  AddDaemon(daemons, 1, "d2", true, false, "long-1a2b3c");
  AddDaemon(daemons, 2, "d3", false, false, "");
  AddDaemon(r.initLost(1), 0, "d9\x1b[2J", true, false, "old-job");
  auto jobs = r.initJobs(2);
  net::ToProto(Job(), jobs[0]);
  net::JobStatus broken = Job();
  broken.id = "broken";
  broken.eta_seconds = INFINITY;
  net::ToProto(broken, jobs[1]);

  const FederationStatus s = ReadStatusReport(r.asReader());
  EXPECT_EQ(s.supernode, "sn1");
  EXPECT_EQ(s.peers, std::vector<std::string>{"sn2"});
  ASSERT_EQ(s.jobs.size(), 1u);  // a job that is not a status is left out
  ASSERT_EQ(s.daemons.size(), 4u);
  EXPECT_EQ(s.daemons[0].state, "busy");
  EXPECT_EQ(s.daemons[0].task, 0);
  EXPECT_EQ(s.daemons[1].state, "granted");
  EXPECT_EQ(s.daemons[1].task, 1);
  EXPECT_EQ(s.daemons[2].state, "free");
  EXPECT_EQ(s.daemons[2].job, "");
  EXPECT_EQ(s.daemons[2].task, -1);
  EXPECT_EQ(s.daemons[3].state, "lost");
  EXPECT_EQ(s.daemons[3].id, "d9\\x1b[2J");  // no escape sequence reaches a terminal
  EXPECT_EQ(s.daemons[3].job, "old-job");

  const nlohmann::json j = ToJson(s);
  EXPECT_EQ(j["daemons"][0]["heartbeat_age_s"], 1.5);
  EXPECT_EQ(j["daemons"][0]["version"], "0.1.0");
  EXPECT_TRUE(j["daemons"][2]["job"].is_null());
  EXPECT_TRUE(j["daemons"][2]["task"].is_null());
  const nlohmann::json& job = j["jobs"][0];
  EXPECT_EQ(job["iterations"], nlohmann::json::array({12, 58}));
  EXPECT_EQ(job["eta_s"], 42.5);
  EXPECT_EQ(job["spawner"], "alice");
  EXPECT_EQ(job["task_list"][0]["report_age_s"], 0.15);
  EXPECT_TRUE(job["task_list"][1]["report_age_s"].is_null());
  EXPECT_EQ(job["task_list"][0]["incarnation"], 2);

  const std::string text = ToText(s);
  EXPECT_NE(text.find("super-node sn1, peers sn2: 4 daemons, 1 running job\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("long-1a2b3c"), std::string::npos) << text;
  EXPECT_NE(text.find("42.5s"), std::string::npos) << text;
}

TEST(TextTableTest, ColumnsAlignWithoutTrailingSpaces) {
  EXPECT_EQ(AlignedTable({"A", "LONGER", "C"}, {{"wide cell", "x", ""}, {"y", "z", "end"}}),
            "A          LONGER  C\n"
            "wide cell  x\n"
            "y          z       end\n");
}

}  // namespace
}  // namespace aiac::spawner
