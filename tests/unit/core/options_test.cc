#include "core/options.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>

namespace aiac {
namespace {

using namespace std::chrono_literals;

struct Sample {
  std::string name = "x";
  std::string level = "info";
  std::string key_file;
  std::vector<std::string> peers;
  bool fast = false;
  double power = 1.5;
  uint32_t count = 3;
  std::chrono::milliseconds period{250};
  std::chrono::duration<double> timeout{300};
};

// A set declared on a Sample, with flags on a CLI11 app.
struct Declared {
  Sample s;
  OptionSet set;
  CLI::App app{"sample"};

  Declared() {
    set.Section("own");
    set.Text("name", s.name, "a name").Flag("--called");
    set.Choice("level", s.level, {"info", "warn"}, "a level");
    set.Path("key_file", s.key_file, "a key").NoFlag();
    set.List("peers", s.peers, "peers").Flag("--peer");
    set.Boolean("fast", s.fast, "fast");
    set.Number("power", s.power, 0, 10, "power");
    set.Integer("count", s.count, 1, 100, "count");
    set.Duration("period_ms", s.period, "period");
    set.Duration("timeout_s", s.timeout, 0.001, 3600, "timeout");
    set.AddFlags(app);
  }

  // Parses `argv` (after the program name), then reads `toml` as the file "f.toml".
  Status Run(std::vector<std::string> argv, const std::string& toml) {
    std::reverse(argv.begin(), argv.end());
    app.parse(argv);
    auto file = ConfigFile::Parse(toml, "f.toml");
    if (!file.ok()) return file.status();
    return set.Read(*file);
  }
};

TEST(OptionSetTest, DefaultsStayWithoutFileOrFlags) {
  Declared d;
  ASSERT_TRUE(d.Run({}, "").ok());
  EXPECT_EQ(d.s.name, "x");
  EXPECT_EQ(d.s.period, 250ms);
  EXPECT_EQ(d.s.timeout.count(), 300);
}

TEST(OptionSetTest, FileThenFlagsOverIt) {
  Declared d;
  Status s = d.Run({"--called", "flag", "--period-ms", "40", "--peer", "a:1", "--peer", "b:2",
                    "--fast", "true", "--timeout-s", "2.5"},
                   "name = \"file\"\nperiod_ms = 10\npower = 2\ncount = 7\nlevel = \"warn\"\n"
                   "peers = [\"c:3\"]\n");
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(d.s.name, "flag");
  EXPECT_EQ(d.s.period, 40ms);
  EXPECT_EQ(d.s.power, 2);
  EXPECT_EQ(d.s.count, 7u);
  EXPECT_EQ(d.s.level, "warn");
  EXPECT_EQ(d.s.peers, (std::vector<std::string>{"a:1", "b:2"}));
  EXPECT_TRUE(d.s.fast);
  EXPECT_EQ(d.s.timeout.count(), 2.5);
}

TEST(OptionSetTest, FileErrorsNameTheFileTheKeyAndTheRange) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"count = 0\n", "f.toml: option 'count' must be an integer in 1..100"},
      {"count = 1.5\n", "f.toml: option 'count' must be an integer in 1..100"},
      {"power = 11\n", "f.toml: option 'power' must be a number in [0, 10]"},
      {"power = nan\n", "f.toml: option 'power' must be a number in [0, 10]"},
      {"period_ms = 0\n", "f.toml: option 'period_ms' must be an integer in 1..1000000000000"},
      {"timeout_s = inf\n", "f.toml: option 'timeout_s' must be a number in [0.001, 3600]"},
      {"level = \"loud\"\n", "f.toml: option 'level' must be one of info or warn, not 'loud'"},
      {"name = 3\n", "f.toml: option 'name' must be a string"},
      {"powr = 1\n", "f.toml: unknown option 'powr' (did you mean 'power'?)"},
  };
  for (const auto& [toml, message] : cases) {
    Declared d;
    EXPECT_EQ(d.Run({}, toml).message(), message) << toml;
    EXPECT_EQ(d.s.count, 3u);
    EXPECT_EQ(d.s.power, 1.5);
  }
}

TEST(OptionSetTest, FlagErrorsNameTheFlag) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--count", "x"}, "--count must be an integer in 1..100, not 'x'"},
      {{"--count", "101"}, "--count must be an integer in 1..100, not '101'"},
      {{"--power", "inf"}, "--power must be a number in [0, 10], not 'inf'"},
      {{"--level", "loud"}, "--level must be one of info or warn, not 'loud'"},
      {{"--fast", "yes"}, "--fast must be true or false, not 'yes'"},
  };
  for (const auto& [argv, message] : cases) {
    Declared d;
    EXPECT_EQ(d.Run(argv, "").message(), message);
  }
}

TEST(OptionSetTest, FileOnlyOptionsHaveNoFlag) {
  Declared d;
  EXPECT_THROW(d.app.parse(std::vector<std::string>{"x", "--key-file"}), CLI::ParseError);
}

TEST(OptionSetTest, PathsAreRelativeToTheFile) {
  Sample s;
  OptionSet set;
  set.Path("key_file", s.key_file, "a key");
  ASSERT_TRUE(set.Load("").ok());
  EXPECT_EQ(s.key_file, "");
  const std::string dir = ::testing::TempDir() + "/options_test";
  std::filesystem::create_directories(dir);
  {
    std::ofstream out(dir + "/f.toml");
    out << "key_file = \"k.key\"\n";
  }
  ASSERT_TRUE(set.Load(dir + "/f.toml").ok());
  EXPECT_EQ(s.key_file, dir + "/k.key");
}

TEST(OptionSetTest, FileChecksRunBeforeTheFlags) {
  Sample s;
  OptionSet set;
  set.Text("name", s.name, "a name");
  set.CheckFile([](const ConfigFile& file) {
    return file.Has("name") ? InvalidArgument(file.name() + ": no names here") : Status::Ok();
  });
  auto file = ConfigFile::Parse("name = \"n\"\n", "f.toml");
  EXPECT_EQ(set.Read(*file).message(), "f.toml: no names here");
}

TEST(OptionSetTest, TheTableHasEveryOptionOfItsSection) {
  Declared d;
  d.set.Section("other");
  std::string other = "o";
  d.set.Text("other", other, "another table's | option").Default("`o` by default");
  const std::string own = d.set.MarkdownTable("own");
  EXPECT_NE(own.find("| key | flag | type | default | meaning |"), std::string::npos);
  EXPECT_NE(own.find("| `name` | `--called` | string | `x` | a name |"), std::string::npos);
  EXPECT_NE(own.find("| `key_file` |  | path | none | a key |"), std::string::npos);
  EXPECT_NE(own.find("| `period_ms` | `--period-ms` | ms | 250 | period |"), std::string::npos);
  EXPECT_NE(own.find("| `timeout_s` | `--timeout-s` | s | 300 | timeout |"), std::string::npos);
  EXPECT_EQ(own.find("other"), std::string::npos);
  EXPECT_EQ(d.set.MarkdownTable("other"),
            "| key | flag | type | default | meaning |\n|---|---|---|---|---|\n"
            "| `other` | `--other` | string | `o` by default | another table's \\| option |\n");
}

TEST(OptionSetTest, HelpShowsTheDefaultAndTheUnit) {
  Declared d;
  const std::string help = d.app.help();
  EXPECT_NE(help.find("period (ms) [default: 250]"), std::string::npos) << help;
  EXPECT_NE(help.find("a name [default: x]"), std::string::npos) << help;
}

}  // namespace
}  // namespace aiac
