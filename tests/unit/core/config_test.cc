#include "core/config.h"

#include <gtest/gtest.h>

namespace aiac {
namespace {

TEST(ConfigFileTest, AbsentKeysKeepDefaults) {
  auto file = ConfigFile::Parse("a = 5\n", "t.toml");
  ASSERT_TRUE(file.ok());
  int64_t a = 1, b = 2;
  file->GetInteger("a", a, INT64_MIN, INT64_MAX);
  file->GetInteger("b", b, INT64_MIN, INT64_MAX);
  EXPECT_TRUE(file->Finish().ok());
  EXPECT_EQ(a, 5);
  EXPECT_EQ(b, 2);
}

TEST(ConfigFileTest, UnknownKeyIsNamed) {
  auto file = ConfigFile::Parse("a = 5\ntypo = 1\n", "t.toml");
  ASSERT_TRUE(file.ok());
  int64_t a = 0;
  file->GetInteger("a", a, INT64_MIN, INT64_MAX);
  Status s = file->Finish();
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "t.toml: unknown option 'typo'");
}

TEST(ConfigFileTest, WrongTypeIsNamed) {
  auto file = ConfigFile::Parse("name = 3\n", "t.toml");
  ASSERT_TRUE(file.ok());
  std::string name;
  file->Get("name", name);
  EXPECT_EQ(file->Finish().message(), "t.toml: option 'name' must be a string");
}

TEST(ConfigFileTest, NonPositiveRefusedWhereRequired) {
  auto file = ConfigFile::Parse("ms = 0\n", "t.toml");
  ASSERT_TRUE(file.ok());
  int64_t ms = 10;
  file->GetInteger("ms", ms, 1, ConfigFile::kMaxPositive);
  EXPECT_EQ(file->Finish().message(), "t.toml: option 'ms' must be an integer in 1..1000000000000");
  EXPECT_EQ(ms, 10);
}

TEST(ConfigFileTest, AbsurdNumbersAreRefused) {
  // 10^16 ms would overflow the clock; inf and nan are no durations or powers.
  for (const char* text : {"ms = 10000000000000000\n", "power = inf\n", "power = nan\n"}) {
    auto file = ConfigFile::Parse(text, "t.toml");
    ASSERT_TRUE(file.ok());
    int64_t ms = 10;
    double power = 1;
    file->GetInteger("ms", ms, 1, ConfigFile::kMaxPositive);
    file->GetNumber("power", power, 0, 1e9);
    EXPECT_FALSE(file->Finish().ok()) << text;
    EXPECT_EQ(ms, 10);
    EXPECT_EQ(power, 1);
  }
}

TEST(ConfigFileTest, StringListsAndSyntaxErrors) {
  auto file = ConfigFile::Parse("peers = [\"a:1\", \"b:2\"]\n", "t.toml");
  ASSERT_TRUE(file.ok());
  std::vector<std::string> peers;
  file->Get("peers", peers);
  EXPECT_TRUE(file->Finish().ok());
  EXPECT_EQ(peers, (std::vector<std::string>{"a:1", "b:2"}));

  auto broken = ConfigFile::Parse("a = = 1\n", "bad.toml");
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.status().message().rfind("bad.toml:1:", 0), 0u) << broken.status().message();
}

TEST(ConfigFileTest, MissingFileIsAnError) {
  auto file = ConfigFile::Load("/nonexistent/aiac.toml");
  EXPECT_FALSE(file.ok());
}

}  // namespace
}  // namespace aiac
