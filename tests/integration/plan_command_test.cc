// `aiac-spawner plan distpm|balance` as a user runs them.
#include "integration/cluster_fixture.h"

namespace aiac::testing {
namespace {

using PlanCommandTest = ClusterFixture;

TEST_F(PlanCommandTest, DistPmExample) {
  ASSERT_EQ(RunSpawner({"plan", "distpm", "--input", SourcePath("apps/examples/distpm.json")}, "plan"), 0) << Log("plan");
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
  EXPECT_GE(j["plans"]["distpm"]["lp_objective"].get<double>(), 0.045 - 1e-12) << "T covers every channel's alpha";
}

TEST_F(PlanCommandTest, BalanceExample) {
  ASSERT_EQ(RunSpawner({"plan", "balance", "--input", SourcePath("apps/examples/balance.json")}, "plan"), 0) << Log("plan");
  auto j = nlohmann::json::parse(Log("plan"));
  EXPECT_NEAR(j["T"][0].get<double>(), 2 * 2000 / (100 * (1 + 0.25 / 4)), 1e-9);
  double sum = 0;
  for (const auto& x : j["split"]["S_P"]) sum += x.get<double>();
  EXPECT_NEAR(sum, 2000, 1e-9);
  EXPECT_TRUE(j["dynamic"]["redistribute"].get<bool>());
  EXPECT_LT(j["dynamic"]["T_check"].get<double>(), j["dynamic"]["T_after"].get<double>());
}

TEST_F(PlanCommandTest, BadInputExitsTwoWithOneLine) {
  WriteFile(dir_ / "sum.json", R"({"groups": [{"name": "a", "load": 5, "target": 4}, {"name": "b", "load": 0, "target": 0}],
                                   "alpha": [[0, 0], [0, 0]], "beta": [[0, 1], [1, 0]]})");
  WriteFile(dir_ / "neg.json", R"({"groups": [{"name": "a", "load": -5, "target": 0}], "alpha": [[0]], "beta": [[0]]})");
  WriteFile(dir_ / "size.json", R"({"groups": [{"name": "a", "load": 1, "target": 1}], "alpha": [[0, 1]], "beta": [[0]]})");
  WriteFile(dir_ / "field.json", R"({"groups": [], "alpha": [], "beta": [], "gamma": 1})");
  WriteFile(dir_ / "mu.json", R"({"X": 10, "workstations": [{"mu": 0, "N": 1, "sigma_n": 0}]})");
  WriteFile(dir_ / "rem.json", R"({"X": 10, "workstations": [{"mu": 1, "N": 1, "sigma_n": 0}], "remaining": [1, 2]})");
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
