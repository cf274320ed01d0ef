// ReexecWithHugePageMalloc: the program runs again, as the same process with the same
// arguments, with glibc.malloc.hugetlb=1 added to the tunables it had; a tunable the user set,
// whatever its value, stands and nothing is re-executed.
#include "core/huge_pages.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>

#include "support/test_support.h"

namespace aiac {
namespace {

// The probe's lines (huge_pages_probe.cc) as key -> value, run with GLIBC_TUNABLES = `tunables`
// (unset when null). Its pid is compared with the one the shell started.
std::map<std::string, std::string> Probe(const char* tunables) {
  const std::string probe = std::string(AIAC_BIN_DIR) + "/huge_pages_probe";
  const std::string command =
      std::string(tunables ? "GLIBC_TUNABLES='" + std::string(tunables) + "' "
                           : "env -u GLIBC_TUNABLES ") +
      "sh -c 'echo started $$; exec " + probe + " again'";
  std::map<std::string, std::string> out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return out;
  std::array<char, 512> line{};
  while (std::fgets(line.data(), line.size(), pipe)) {
    std::istringstream in(line.data());
    std::string key, value;
    in >> key;
    std::getline(in >> std::ws, value);
    out[key] = value;
  }
  ::pclose(pipe);
  return out;
}

TEST(HugePagesTest, TheProgramRunsAgainWithTheTunableAsTheSameProcess) {
  auto out = Probe(nullptr);
  EXPECT_EQ(out["tunables"], "glibc.malloc.hugetlb=1");
  EXPECT_EQ(out["guard"], "gone");
  EXPECT_EQ(out["args"], "kept");
  EXPECT_EQ(out["pid"], out["started"]);
}

TEST(HugePagesTest, OtherTunablesAreKept) {
  auto out = Probe("glibc.malloc.arena_max=2");
  EXPECT_EQ(out["tunables"], "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1");
  EXPECT_EQ(out["guard"], "gone");
}

TEST(HugePagesTest, AUsersChoiceStands) {
  for (const char* choice : {"glibc.malloc.hugetlb=0", "glibc.malloc.hugetlb=1"}) {
    auto out = Probe(choice);
    EXPECT_EQ(out["tunables"], choice);
    EXPECT_EQ(out["guard"], "gone");
    EXPECT_EQ(out["pid"], out["started"]);
  }
}

}  // namespace
}  // namespace aiac
