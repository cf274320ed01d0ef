// Command-line conventions the three programs share: --version, exit 2 for a usage error, and
// `run --json -` for programs that read the summary.
#include <cstdio>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

#include "app/app.h"
#include "integration/cluster_fixture.h"
#include "net/connection.h"

namespace aiac::testing {
namespace {

using CliTest = ClusterFixture;

// What `command` writes to standard output (its standard error dropped), and its exit code;
// with `errors`, what it writes to standard error instead.
std::pair<std::string, int> Output(const std::string& command, bool errors = false) {
  std::string out;
  FILE* pipe = popen((command + (errors ? " 2>&1 >/dev/null" : " 2>/dev/null")).c_str(), "r");
  if (!pipe) return {"", -1};
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  const int status = pclose(pipe);
  return {out, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

TEST_F(CliTest, EveryProgramSaysItsVersionCommitAndProtocols) {
  for (const std::string program : {"aiac-spawner", "aiac-supernode", "aiac-daemon"}) {
    const auto [out, code] = Output(BinPath(program) + " --version");
    EXPECT_EQ(code, 0) << program;
    EXPECT_EQ(out.rfind(program + " 0.", 0), 0u) << out;
    EXPECT_NE(out.find("(commit "), std::string::npos) << out;
    EXPECT_NE(out.find("protocol " + std::to_string(net::kProtocolVersion)), std::string::npos)
        << out;
    EXPECT_NE(out.find("app API " + std::to_string(app::kApiVersion)), std::string::npos) << out;
  }
}

TEST_F(CliTest, AnUnknownFlagOrABadValueIsAUsageErrorEverywhere) {
  for (const auto& [program, command] :
       {std::pair{"aiac-spawner", " run"}, std::pair{"aiac-supernode", ""},
        std::pair{"aiac-daemon", ""}}) {
    EXPECT_EQ(Output(BinPath(program) + command + " --no-such-flag 1").second, 2) << program;
  }
  EXPECT_EQ(Output(BinPath("aiac-spawner") + " no-such-command").second, 2);
  EXPECT_EQ(Output(BinPath("aiac-daemon") + " --heartbeat-ms soon").second, 2);
}

TEST_F(CliTest, AMistypedCommandOrFlagGetsTheOneMostLikelyMeant) {
  auto [err, code] = Output(BinPath("aiac-spawner") + " runn job.toml", true);
  EXPECT_EQ(code, 2);
  EXPECT_NE(err.find("did you mean 'run'?"), std::string::npos) << err;
  std::tie(err, code) = Output(BinPath("aiac-spawner") + " run job.toml --jsn out.json", true);
  EXPECT_EQ(code, 2);
  EXPECT_NE(err.find("did you mean '--json'?"), std::string::npos) << err;
  std::tie(err, code) = Output(BinPath("aiac-daemon") + " --heartbeat-m 5", true);
  EXPECT_EQ(code, 2);
  EXPECT_NE(err.find("did you mean '--heartbeat-ms'?"), std::string::npos) << err;
}

// Log lines carry an ISO 8601 date and time; --log-format json makes each one a JSON object,
// the local cluster's processes' too.
TEST_F(CliTest, LogLinesAreDatedAndCanBeJson) {
  const std::regex iso(R"(^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}[+-]\d{2}:\d{2})");
  const std::string job = RingJob(2, 20);
  auto [err, code] = Output(BinPath("aiac-spawner") + " run --local 2 " + job, true);
  ASSERT_EQ(code, 0) << err;
  std::istringstream text(err);
  size_t lines = 0;
  for (std::string line; std::getline(text, line);) {
    EXPECT_TRUE(std::regex_search(line, iso)) << line;
    ++lines;
  }
  EXPECT_GT(lines, 0u);
  std::tie(err, code) = Output(
      BinPath("aiac-spawner") + " run --local 2 --local-log-level info --log-format json " + job,
      true);
  ASSERT_EQ(code, 0) << err;
  std::istringstream json(err);
  std::set<std::string> processes;
  for (std::string line; std::getline(json, line);) {
    const auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    ASSERT_TRUE(j.is_object()) << line;
    EXPECT_TRUE(std::regex_search(j["time"].get<std::string>(), iso)) << line;
    EXPECT_TRUE(j["level"].is_string() && j["message"].is_string()) << line;
    processes.insert(j["process"].get<std::string>());
  }
  EXPECT_EQ(processes, (std::set<std::string>{"daemon", "spawner", "supernode"}));
}

TEST_F(CliTest, JsonToStandardOutputIsTheSummaryAlone) {
  const std::string job = RingJob(2, 20);
  const auto [out, code] = Output(BinPath("aiac-spawner") + " run --local 2 " + job + " --json -");
  ASSERT_EQ(code, 0) << out;
  const auto summary = nlohmann::json::parse(out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(summary.is_discarded()) << out;
  EXPECT_EQ(summary["status"], "converged");
  EXPECT_EQ(summary["tasks"], 2);
}

}  // namespace
}  // namespace aiac::testing
