// Names a peer sends, and how peer text reaches a log line.
#include "core/names.h"

#include <gtest/gtest.h>

#include "core/printable.h"
#include "support/test_support.h"

namespace aiac {
namespace {

TEST(NamesTest, AcceptsTheIdsTheBinariesMake) {
  const std::vector<std::string> ids = {"d1",
                                        "d-host.example.org-7401",
                                        "sn-7400",
                                        "spawner-4242",
                                        "cg-0a1b2c",
                                        "user@site:job+2",
                                        std::string(128, 'a')};
  for (const std::string& ok : ids) {
    EXPECT_OK(CheckName("node id", ok));
  }
}

TEST(NamesTest, RefusesEmptyLongAndControlCharactersWithAPrintableMessage) {
  EXPECT_NE(CheckName("node id", "").message().find("is empty"), std::string::npos);
  const Status long_id = CheckName("node id", std::string(1 << 20, 'x'));
  EXPECT_NE(long_id.message().find("longer than 128 bytes"), std::string::npos);
  EXPECT_LT(long_id.message().size(), 200u) << "a 1 MiB id must not become a 1 MiB log line";
  for (const std::string bad : {"a b", "evil\nsn1 granted", "a/b", "x\x01", "caf\xc3\xa9"}) {
    const Status s = CheckName("job id", bad);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(s.message().find('\n'), std::string::npos) << s.message();
  }
}

TEST(PrintableTest, EscapesControlCharactersAndCapsLength) {
  EXPECT_EQ(Printable("plain"), "\"plain\"");
  EXPECT_EQ(Printable("a\nb\t\"c\"\\"), "\"a\\nb\\t\\\"c\\\"\\\\\"");
  EXPECT_EQ(Printable(std::string("\x01\xff", 2)), "\"\\x01\\xff\"");
  EXPECT_EQ(Printable(std::string(10, 'x'), 4), "\"xxxx\"...(10 bytes)");
  EXPECT_EQ(Printable("say \"hi\"\nbye", 96, false), "say \"hi\"\\nbye");
}

}  // namespace
}  // namespace aiac
