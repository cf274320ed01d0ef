// Command-line conventions the three programs share: --version, exit 2 for a usage error, and
// `run --json -` for programs that read the summary.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "app/app.h"
#include "integration/cluster_fixture.h"
#include "net/connection.h"

namespace aiac::testing {
namespace {

using CliTest = ClusterFixture;

// What `command` writes to standard output (its standard error dropped), and its exit code.
std::pair<std::string, int> Output(const std::string& command) {
  std::string out;
  FILE* pipe = popen((command + " 2>/dev/null").c_str(), "r");
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
  for (const std::string program : {"aiac-spawner run", "aiac-supernode", "aiac-daemon"}) {
    EXPECT_EQ(
        Output(BinPath(program.substr(0, program.find(' '))) +
               program.substr(std::min(program.size(), program.find(' '))) + " --no-such-flag 1")
            .second,
        2)
        << program;
  }
  EXPECT_EQ(Output(BinPath("aiac-spawner") + " no-such-command").second, 2);
  EXPECT_EQ(Output(BinPath("aiac-daemon") + " --heartbeat-ms soon").second, 2);
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
