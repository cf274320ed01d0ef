// `aiac-spawner map` as a user runs it: JSON in files, JSON on stdout, one line per error.
#include <cmath>

#include "integration/cluster_fixture.h"

namespace aiac::testing {
namespace {

using MapCommandTest = ClusterFixture;

TEST_F(MapCommandTest, HandWorkedExampleWithFailures) {
  ASSERT_EQ(RunSpawner({"map", "--platform", SourcePath("examples/planning/platform.json"), "--tig",
                        SourcePath("examples/planning/tig.json"), "--fail", "n5", "--fail", "n1"},
                       "map"),
            0)
      << Log("map");
  auto j = nlohmann::json::parse(Log("map"));
  const double hd = std::sqrt(1.36) / 1.8;
  EXPECT_EQ(j["algo"], "maheve");
  EXPECT_NEAR(j["hd"].get<double>(), hd, 1e-12);
  ASSERT_EQ(j["clusters"].size(), 2u);
  EXPECT_EQ(j["clusters"][0]["name"], "c2");
  EXPECT_NEAR(j["clusters"][0]["mark"].get<double>(), std::pow(75, hd) + std::pow(40, 1 - hd),
              1e-9);
  EXPECT_EQ(j["task_order"], nlohmann::json({1, 3, 2, 0}));
  EXPECT_EQ(j["assignment"],
            nlohmann::json::parse(R"([{"task": 0, "node": "n4"}, {"task": 1, "node": "n5"},
                                                      {"task": 2, "node": "n2"}, {"task": 3, "node": "n1"}])"));
  EXPECT_EQ(j["reserved"], nlohmann::json({"n3"}));
  EXPECT_NEAR(j["predicted_et"].get<double>(), 30.052, 1e-9);
  EXPECT_EQ(j["replacements"], nlohmann::json::parse(R"([{"failed": "n5", "task": 1, "node": "n3"},
                                                        {"failed": "n1", "task": 3, "node": null}])"));
}

TEST_F(MapCommandTest, EveryAlgorithmAnswers) {
  for (const char* algo : {"default", "aiac-qm", "f-ec"}) {
    ASSERT_EQ(
        RunSpawner({"map", "--platform", SourcePath("examples/planning/platform.json"), "--tig",
                    SourcePath("examples/planning/tig.json"), "--algo", algo, "--fail", "n2"},
                   "map"),
        0)
        << algo << Log("map");
    auto j = nlohmann::json::parse(Log("map"));
    EXPECT_EQ(j["algo"], algo);
    EXPECT_EQ(j["assignment"].size(), 4u);
    EXPECT_EQ(j["reserved"].size(), 0u);
    EXPECT_EQ(j["replacements"].size(), 1u);
  }
}

// A platform file (.toml) as the platform: the MAHEVE hd 0.72 platform, its clusters marked and a
// failed node replaced inside its cluster first; a broken platform file is one line, exit 2.
TEST_F(MapCommandTest, PlatformFilesAreReadAsWell) {
  ASSERT_EQ(RunSpawner({"map", "--platform", SourcePath("conf/platforms/maheve-hd072.toml"),
                        "--tig", SourcePath("examples/planning/tig.json"), "--fail", "c4-23"},
                       "map"),
            0)
      << Log("map");
  auto j = nlohmann::json::parse(Log("map"));
  EXPECT_NEAR(j["hd"].get<double>(), 0.72, 0.0005);
  EXPECT_EQ(j["clusters"].size(), 5u);
  EXPECT_EQ(j["assignment"].size(), 4u);
  WriteFile(dir_ / "bad.toml",
            "name = \"bad\"\n[[clusters]]\nname = \"c\"\npowers = [0]\nlatency_ms = "
            "0\nbandwidth_mbps = 1\n");
  EXPECT_EQ(RunSpawner({"map", "--platform", dir_ / "bad.toml", "--tig",
                        SourcePath("examples/planning/tig.json")},
                       "bad"),
            2);
  EXPECT_EQ(Log("bad"), "aiac-spawner map: " + (dir_ / "bad.toml") +
                            ": clusters[0]: powers[0] must be a positive number\n");
}

TEST_F(MapCommandTest, BadInputExitsTwoWithOneLine) {
  const std::string good_p = SourcePath("examples/planning/platform.json");
  const std::string good_t = SourcePath("examples/planning/tig.json");
  WriteFile(dir_ / "edge.json",
            R"({"tasks": [{"id": 0, "cost": 1}], "edges": [{"a": 0, "b": 9, "volume": 1}]})");
  WriteFile(dir_ / "dup.json", R"({"tasks": [{"id": 0, "cost": 1}, {"id": 0, "cost": 2}]})");
  WriteFile(dir_ / "cost.json", R"({"tasks": [{"id": 0, "cost": 0}]})");
  WriteFile(dir_ / "many.json",
            R"({"tasks": [{"id": 0, "cost": 1}, {"id": 1, "cost": 1}, {"id": 2, "cost": 1},
                                             {"id": 3, "cost": 1}, {"id": 4, "cost": 1}, {"id": 5, "cost": 1}]})");
  WriteFile(dir_ / "field.json", R"({"tasks": [{"id": 0, "cost": 1, "colour": "red"}]})");
  WriteFile(dir_ / "power.json",
            R"({"clusters": [{"name": "c", "nodes": [{"id": "n", "power": -2}]}]})");
  WriteFile(
      dir_ / "dupnode.json",
      R"({"clusters": [{"name": "c", "nodes": [{"id": "n", "power": 1}, {"id": "n", "power": 1}]}]})");
  WriteFile(dir_ / "broken.json", R"({"tasks": [)");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--platform", good_p, "--tig", dir_ / "edge.json"}, "edge 0-9 names unknown task 9"},
      {{"--platform", good_p, "--tig", dir_ / "dup.json"}, "duplicate task id 0"},
      {{"--platform", good_p, "--tig", dir_ / "cost.json"}, "task 0: cost must be positive"},
      {{"--platform", good_p, "--tig", dir_ / "many.json"}, "6 tasks but only 5 free nodes"},
      {{"--platform", good_p, "--tig", dir_ / "field.json"}, "unknown field 'colour'"},
      {{"--platform", dir_ / "power.json", "--tig", good_t}, "node 'n': power must be positive"},
      {{"--platform", dir_ / "dupnode.json", "--tig", good_t}, "duplicate node id 'n'"},
      {{"--platform", good_p, "--tig", dir_ / "broken.json"}, "not valid JSON"},
      {{"--platform", good_p, "--tig", dir_ / "absent.json"}, "cannot read"},
      {{"--platform", good_p, "--tig", good_t, "--fail", "n99"}, "unknown node 'n99'"},
      {{"--platform", good_p, "--tig", good_t, "--algo", "metis"},
       "unknown mapping algorithm 'metis'"},
      {{"--platform", good_p, "--tig", good_t, "--reserve", "1.5"}, "reserve must be in [0, 1)"},
  };
  for (const auto& [args, message] : cases) {
    std::vector<std::string> argv{"map"};
    argv.insert(argv.end(), args.begin(), args.end());
    ASSERT_EQ(RunSpawner(argv, "bad"), 2) << message;
    const std::string out = Log("bad");
    EXPECT_NE(out.find(message), std::string::npos) << out;
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  }
}

}  // namespace
}  // namespace aiac::testing
