// `aiac-spawner plan distpm|balance` as a user runs them.
#include "integration/cluster_fixture.h"

namespace aiac::testing {
namespace {

using PlanCommandTest = ClusterFixture;

TEST_F(PlanCommandTest, DistPmExample) {
  ASSERT_EQ(RunSpawner({"plan", "distpm", "--input", SourcePath("examples/planning/distpm.json")},
                       "plan"),
            0)
      << Log("plan");
  auto j = nlohmann::json::parse(Log("plan"));
  EXPECT_EQ(j["overloaded"], nlohmann::json({"ncsa", "caltech"}));
  EXPECT_EQ(j["underloaded"], nlohmann::json({"sdsc", "anl"}));
  for (const char* plan : {"distpm", "greedy"}) {
    int64_t out_ncsa = 0, in_sdsc = 0;
    for (const auto& f : j["plans"][plan]["flows"]) {
      if (f["from"] == "ncsa") out_ncsa += f["amount"].get<int64_t>();
      if (f["to"] == "sdsc") in_sdsc += f["amount"].get<int64_t>();
    }
    EXPECT_EQ(out_ncsa, 200) << plan;
    EXPECT_EQ(in_sdsc, 150) << plan;
  }
  EXPECT_GE(j["plans"]["distpm"]["lp_objective"].get<double>(), 0.045 - 1e-12)
      << "T covers every channel's alpha";
}

TEST_F(PlanCommandTest, BalanceExample) {
  ASSERT_EQ(RunSpawner({"plan", "balance", "--input", SourcePath("examples/planning/balance.json")},
                       "plan"),
            0)
      << Log("plan");
  auto j = nlohmann::json::parse(Log("plan"));
  EXPECT_NEAR(j["T"][0].get<double>(), 2 * 2000 / (100 * (1 + 0.25 / 4)), 1e-9);
  double sum = 0;
  for (const auto& x : j["split"]["S_P"]) sum += x.get<double>();
  EXPECT_NEAR(sum, 2000, 1e-9);
  EXPECT_TRUE(j["dynamic"]["redistribute"].get<bool>());
  EXPECT_LT(j["dynamic"]["T_check"].get<double>(), j["dynamic"]["T_after"].get<double>());
}

TEST_F(PlanCommandTest, RingExampleIsReplayedAndOptimal) {
  ASSERT_EQ(
      RunSpawner({"plan", "ring", "--input", SourcePath("examples/planning/ring.json")}, "plan"), 0)
      << Log("plan");
  auto j = nlohmann::json::parse(Log("plan"));
  EXPECT_EQ(j["case"], "bi-het");
  EXPECT_EQ(j["time"], 8.0);
  EXPECT_EQ(j["lower_bound"], 8.0);
  EXPECT_EQ(j["optimal"], true);
  EXPECT_EQ(j["light"], false);
  // Conservation and run lengths: end - start = items x cost of the link used.
  const std::vector<double> c_next = {1.0, 1.5, 1.0, 2.0, 1.0}, c_prev = {1.0, 1.0, 0.5, 1.0, 1.5};
  std::vector<int64_t> load = {1, 2, 4, 3, 3};
  for (const auto& t : j["transfers"]) {
    const int from = t["from"], to = t["to"];
    const int64_t items = t["items"];
    const double cost = to == (from + 1) % 5 ? c_next[from] : c_prev[from];
    EXPECT_NEAR(t["end"].get<double>() - t["start"].get<double>(), items * cost, 1e-9);
    load[from] -= items;
    load[to] += items;
  }
  EXPECT_EQ(load, (std::vector<int64_t>{9, 1, 1, 1, 1}));

  WriteFile(
      dir_ / "uni.json",
      R"({"direction": "uni", "loads": [10, 1, 10, 3], "delta": [3, -5, 4, -2], "c_next": [2, 2, 2, 2]})");
  ASSERT_EQ(RunSpawner({"plan", "ring", "--input", dir_ / "uni.json"}, "uni"), 0) << Log("uni");
  auto u = nlohmann::json::parse(Log("uni"));
  EXPECT_EQ(u["case"], "uni-hom");
  EXPECT_EQ(u["time"], 10.0);
  EXPECT_EQ(u["light"], nullptr);
}

TEST_F(PlanCommandTest, RingBadInputExitsTwoWithOneLine) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"direction": "uni", "loads": [2, 2, 2], "delta": [1, -1], "c_next": [1, 1, 1]})",
       "must have the same length"},
      {R"({"direction": "uni", "loads": [2, 2], "delta": [1, 0], "c_next": [1, 1]})",
       "the sum of delta is 1, not 0"},
      {R"({"direction": "uni", "loads": [0, 2], "delta": [0, 0], "c_next": [1, 1]})",
       "holds less than 1 item before"},
      {R"({"direction": "uni", "loads": [2, 2], "delta": [2, -2], "c_next": [1, 1]})",
       "would hold less than 1 item after"},
      {R"({"direction": "uni", "loads": [2, 2], "delta": [1, -1], "c_next": [1, -1]})",
       "c_next must be positive"},
      {R"({"direction": "uni", "loads": [2], "delta": [0], "c_next": [1]})",
       "at least 2 processors"},
      {R"({"direction": "bi", "loads": [2, 2], "delta": [1, -1], "c_next": [1, 1]})",
       "c_prev is required"},
      {R"({"direction": "up", "loads": [2, 2], "delta": [1, -1], "c_next": [1, 1]})",
       "'direction' must be"},
      {R"({"direction": "uni", "loads": [2.5, 2], "delta": [1, -1], "c_next": [1, 1]})",
       "whole numbers"},
      {R"({"direction": "uni", "loads": [2, 2], "delta": [1, -1], "c_next": [1, 1], "c_side": [1]})",
       "unknown field 'c_side'"},
      {R"({"direction": "uni", "loads": [2, 2], "delta": [1, -1]})", "missing field 'c_next'"},
  };
  for (const auto& [content, message] : cases) {
    WriteFile(dir_ / "r.json", content);
    ASSERT_EQ(RunSpawner({"plan", "ring", "--input", dir_ / "r.json"}, "bad"), 2) << message;
    const std::string out = Log("bad");
    EXPECT_NE(out.find(message), std::string::npos) << out;
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  }
}

TEST_F(PlanCommandTest, BadInputExitsTwoWithOneLine) {
  WriteFile(
      dir_ / "sum.json",
      R"({"groups": [{"name": "a", "load": 5, "target": 4}, {"name": "b", "load": 0, "target": 0}],
                                   "alpha": [[0, 0], [0, 0]], "beta": [[0, 1], [1, 0]]})");
  WriteFile(
      dir_ / "neg.json",
      R"({"groups": [{"name": "a", "load": -5, "target": 0}], "alpha": [[0]], "beta": [[0]]})");
  WriteFile(
      dir_ / "size.json",
      R"({"groups": [{"name": "a", "load": 1, "target": 1}], "alpha": [[0, 1]], "beta": [[0]]})");
  WriteFile(dir_ / "field.json", R"({"groups": [], "alpha": [], "beta": [], "gamma": 1})");
  WriteFile(dir_ / "mu.json", R"({"X": 10, "workstations": [{"mu": 0, "N": 1, "sigma_n": 0}]})");
  WriteFile(dir_ / "rem.json",
            R"({"X": 10, "workstations": [{"mu": 1, "N": 1, "sigma_n": 0}], "remaining": [1, 2]})");
  WriteFile(dir_ / "x.json", R"({"X": -10, "workstations": [{"mu": 1, "N": 1, "sigma_n": 0}]})");
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"distpm", "sum.json", "total load 5 != total target 4"},
      {"distpm", "neg.json", "must be non-negative"},
      {"distpm", "size.json", "alpha must be 1 x 1"},
      {"distpm", "field.json", "unknown field 'gamma'"},
      {"distpm", "absent.json", "cannot read"},
      {"balance", "mu.json", "workstation 0: mu must be positive"},
      {"balance", "rem.json", "'remaining' has 2 entries for 1 workstations"},
      {"balance", "x.json", "X must be positive"},
  };
  for (const auto& [cmd, file, message] : cases) {
    ASSERT_EQ(RunSpawner({"plan", cmd, "--input", dir_ / file}, "bad"), 2) << message;
    const std::string out = Log("bad");
    EXPECT_NE(out.find(message), std::string::npos) << out;
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  }
}

}  // namespace
}  // namespace aiac::testing
