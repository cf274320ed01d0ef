// `aiac-spawner status` and `aiac-spawner cancel` against a hand-started federation, as an
// operator runs them: two peer super-nodes, daemons on each, a job that would run for ever.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cluster_fixture.h"

namespace aiac::testing {
namespace {

class DeploymentStatusTest : public ClusterFixture {
 protected:
  // `status --json` at `sn` (optionally `--job ID`), parsed; null when it failed.
  nlohmann::json Status(const std::string& sn, const std::string& job = "") {
    std::vector<std::string> args{"status", "--supernode", sn, "--json"};
    if (!job.empty()) args.insert(args.end(), {"--job", job});
    std::string out;
    if (Ask(args, out) != 0) return nullptr;
    return nlohmann::json::parse(out, nullptr, false);
  }
  static const nlohmann::json* Daemon(const nlohmann::json& status, const std::string& id) {
    for (const auto& d : status["daemons"]) {
      if (d["id"] == id) return &d;
    }
    return nullptr;
  }
};

TEST_F(DeploymentStatusTest, ListsTheFederationAndCancelsAJobThroughAPeer) {
  WriteFile(dir_ / "sn.toml", ReadFile(dir_ / "key.toml") + "digest_interval_ms = 200\n");
  const std::string a = StartSupernode("sn-a", {}, "127.0.0.1:0", "sn.toml");
  const std::string b = StartSupernode("sn-b", {"--peer", a}, "127.0.0.1:0", "sn.toml");
  for (const char* d : {"d1", "d2"}) StartDaemon(d, {a});
  StartDaemon("d3", {b});
  // Every daemon, each with its super-node, as sn-b sees them (d1, d2 from sn-a's digest).
  nlohmann::json seen;
  ASSERT_TRUE(WaitUntil(
      [&] {
        seen = Status(b);
        return seen.is_object() && seen["daemons"].size() == 3;
      },
      std::chrono::seconds(60)))
      << seen.dump(2) << Log("sn-b");
  EXPECT_EQ(seen["supernode"], "sn-b");
  EXPECT_EQ(seen["peers"], nlohmann::json::array({"sn-a"}));
  ASSERT_NE(Daemon(seen, "d1"), nullptr);
  EXPECT_EQ((*Daemon(seen, "d1"))["supernode"], "sn-a");
  EXPECT_EQ((*Daemon(seen, "d3"))["supernode"], "sn-b");
  EXPECT_EQ((*Daemon(seen, "d3"))["state"], "free");
  EXPECT_FALSE((*Daemon(seen, "d3"))["version"].get<std::string>().empty());

  // A job on sn-a's two daemons that runs far longer than the test: until cancelled.
  WriteJob("long.toml",
           "name = \"long\"\napp = \"synthetic\"\ntasks = 2\ntimeout_s = 600\n[params]\n"
           "items = 2000\niterations = 1000000\nbase_cost = 2000\n");
  auto spawner = Start("aiac-spawner",
                       {"run", "--config", dir_ / "key.toml", "--supernode", a, dir_ / "long.toml",
                        "--json", dir_ / "long.json"},
                       dir_ / "spawner.log");
  // The job, running, at sn-b: registered at sn-a, known through its digest.
  nlohmann::json job;
  ASSERT_TRUE(WaitUntil(
      [&] {
        seen = Status(b);
        if (!seen.is_object() || seen["jobs"].size() != 1) return false;
        job = seen["jobs"][0];
        return job["phase"] == "running" && job["iterations"][0].get<uint64_t>() > 0;
      },
      std::chrono::seconds(120)))
      << seen.dump(2) << Log("spawner");
  const std::string id = job["id"];
  EXPECT_EQ(id.rfind("long-", 0), 0u) << id;
  EXPECT_EQ(job["app"], "synthetic");
  EXPECT_EQ(job["supernode"], "sn-a");
  EXPECT_EQ(job["spawner"], "spawner");
  EXPECT_EQ(job["tasks"], 2);
  EXPECT_EQ(job["task_list"].size(), 2u);
  // The daemons that run it are busy for it, each with its task.
  std::set<int> tasks;
  for (const char* d : {"d1", "d2"}) {
    const nlohmann::json* row = Daemon(seen, d);
    ASSERT_NE(row, nullptr);
    EXPECT_EQ((*row)["state"], "busy") << row->dump();
    EXPECT_EQ((*row)["job"], id);
    tasks.insert((*row)["task"].get<int>());
  }
  EXPECT_EQ(tasks, (std::set<int>{0, 1}));
  EXPECT_EQ((*Daemon(seen, "d3"))["state"], "free");

  // One job's tasks, as text and as JSON.
  std::string text;
  ASSERT_EQ(Ask({"status", "--supernode", a, "--job", id}, text), 0) << text;
  EXPECT_NE(text.find("TASK  DAEMON"), std::string::npos) << text;
  const nlohmann::json one = Status(a, id);
  ASSERT_TRUE(one.is_object());
  EXPECT_EQ(one["id"], id);
  EXPECT_EQ(one["task_list"][0]["incarnation"], 1);
  // The tables, as an operator reads them.
  ASSERT_EQ(Ask({"status", "--supernode", a}, text), 0) << text;
  EXPECT_NE(text.find("DAEMON"), std::string::npos) << text;
  EXPECT_NE(text.find(id), std::string::npos) << text;

  // Cancelled at sn-b, which forwards it to sn-a, which tells the spawner.
  ASSERT_EQ(Ask({"cancel", id, "--supernode", b}, text, "cancel"), 0) << text << Log("sn-b");
  auto code = spawner.WaitFor(std::chrono::seconds(120));
  ASSERT_TRUE(code.has_value()) << Log("spawner");
  EXPECT_EQ(*code, 130) << Log("spawner");
  const nlohmann::json summary = Json("long.json");
  EXPECT_EQ(summary["status"], "aborted");
  EXPECT_NE(summary["error"].get<std::string>().find("cancelled by spawner"), std::string::npos)
      << summary.dump(2);
  // As Ctrl-C would: the last iterate gathered (and written, for an app with an output).
  EXPECT_TRUE(LogHas("spawner", "last iterate gathered")) << Log("spawner");
  EXPECT_TRUE(LogHas("sn-b", "cancel asked by spawner")) << Log("sn-b");
  EXPECT_TRUE(LogHas("sn-a", "cancel asked by spawner")) << Log("sn-a");

  // The job is gone and its daemons are free again, everywhere.
  ASSERT_TRUE(WaitUntil(
      [&] {
        seen = Status(b);
        return seen.is_object() && seen["jobs"].empty() && Daemon(seen, "d1") &&
               (*Daemon(seen, "d1"))["state"] == "free" && (*Daemon(seen, "d2"))["state"] == "free";
      },
      std::chrono::seconds(60)))
      << seen.dump(2);
  // A job nobody runs cannot be cancelled.
  EXPECT_EQ(Ask({"cancel", id, "--supernode", a}, text, "cancel2"), 1);
  EXPECT_NE(text.find("no running job " + id), std::string::npos) << text;

  // A daemon sn-a drops (silent past its failure timeout) leaves sn-b's list too: sn-a's next
  // message to it says so (registry_delta.h).
  procs_.at("d2").Signal(SIGKILL);
  ASSERT_TRUE(WaitUntil(
      [&] {
        seen = Status(b);
        return seen.is_object() && seen["daemons"].size() == 2 && !Daemon(seen, "d2");
      },
      std::chrono::seconds(60)))
      << seen.dump(2);
  EXPECT_EQ((*Daemon(seen, "d1"))["state"], "free");
}

TEST_F(DeploymentStatusTest, ALostDaemonIsListedAsLost) {
  WriteFile(dir_ / "sn.toml",
            ReadFile(dir_ / "key.toml") + "failure_timeout_ms = 1000\ndigest_interval_ms = 100\n");
  const std::string sn = StartSupernode("sn-a", {}, "127.0.0.1:0", "sn.toml");
  StartDaemon("d1", {sn});
  ASSERT_TRUE(WaitUntil([&] { return LogHas("sn-a", "daemon d1 registered"); })) << Log("sn-a");
  procs_.at("d1").Signal(SIGKILL);  // no deregistration: lost
  nlohmann::json seen;
  ASSERT_TRUE(WaitUntil(
      [&] {
        seen = Status(sn);
        return seen.is_object() && seen["daemons"].size() == 1 &&
               seen["daemons"][0]["state"] == "lost";
      },
      std::chrono::seconds(60)))
      << seen.dump(2);
  EXPECT_GE(seen["daemons"][0]["heartbeat_age_s"].get<double>(), 1.0);
}

// A measured power is measured again while the daemon is idle: one kept from an earlier start
// (here a figure no host delivers) gives way to what the host delivers now, in DATA/power and at
// the super-node.
TEST_F(DeploymentStatusTest, AnIdleDaemonMeasuresItsPowerAgain) {
  const std::string sn = StartSupernode("sn-a");
  char host[256] = {};
  ASSERT_EQ(gethostname(host, sizeof host - 1), 0);
  std::filesystem::create_directories(dir_ / "d1");
  WriteFile(dir_ / "d1/power", "power 100000\nhost " + std::string(host) + "\ncores 2\n");
  StartDaemon("d1", {sn}, "key.toml", "0", {"--cores", "2", "--remeasure-power-ms", "300"});
  ASSERT_TRUE(WaitUntil([&] { return LogHas("d1", "power measured again while idle"); },
                        std::chrono::seconds(60)))
      << Log("d1");
  nlohmann::json seen;
  ASSERT_TRUE(WaitUntil(
      [&] {
        seen = Status(sn);
        return seen.is_object() && seen["daemons"].size() == 1 &&
               seen["daemons"][0]["power"].get<double>() < 100000;
      },
      std::chrono::seconds(60)))
      << seen.dump(2) << Log("sn-a");
  EXPECT_EQ(ReadFile(dir_ / "d1/power").find("power 100000"), std::string::npos);
}

TEST_F(DeploymentStatusTest, ASuperNodeThatIsDownOrAWrongKeyIsOneLineAndExitOne) {
  // A port nobody listens on: a listener opened and closed.
  const std::string sn = StartSupernode("sn-a");
  std::string out;
  procs_.erase("sn-a");
  EXPECT_EQ(Ask({"status", "--supernode", sn}, out), 1) << out;
  EXPECT_NE(out.find("aiac-spawner: "), std::string::npos) << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;

  const std::string up = StartSupernode("sn-b");
  EXPECT_EQ(RunSpawner({"status", "--config", dir_ / "wrong.toml", "--supernode", up}, "wrong"), 1)
      << Log("wrong");
  const std::string wrong = Log("wrong");
  EXPECT_EQ(std::count(wrong.begin(), wrong.end(), '\n'), 1) << wrong;
  EXPECT_EQ(RunSpawner({"status", "--supernode", up, "--bogus"}, "usage"), 2) << Log("usage");
}

}  // namespace
}  // namespace aiac::testing
