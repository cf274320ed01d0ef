// The loader's checks before any class of a plugin is used: a file that is no plugin, and a
// plugin of another app API version (whose factory aborts if called).
#include <gtest/gtest.h>

#include "runtime/plugin.h"
#include "support/test_support.h"

namespace aiac::runtime {
namespace {

std::string Refusal(const std::string& path) {
  auto p = Plugin::Load(path);
  return p.ok() ? "loaded" : p.status().message();
}

TEST(PluginLoadTest, APluginOfAnotherApiVersionIsRefusedWithBothVersions) {
  const std::string here = std::to_string(app::kApiVersion);
  EXPECT_EQ(Refusal(AIAC_FOREIGN_API_PLUGIN),
            "plugin " AIAC_FOREIGN_API_PLUGIN " was built for app API 1000, this aiac speaks " +
                here + ": rebuild it against this aiac's headers");
  EXPECT_EQ(Refusal(AIAC_NO_API_PLUGIN), "plugin " AIAC_NO_API_PLUGIN
                                         " was built for app API 8 or older, this aiac speaks " +
                                             here + ": rebuild it against this aiac's headers");
}

TEST(PluginLoadTest, AFileThatIsNoPluginIsRefused) {
  testing::TempDir dir;
  testing::WriteFile(dir.path() + "/cut.so",
                     "\x7f"
                     "ELF but cut short");
  EXPECT_NE(Refusal(dir.path() + "/cut.so").find("cannot load plugin"), std::string::npos);
  // A shared library that is no aiac app: the C library's math.
  EXPECT_NE(Refusal(AIAC_NOT_AN_APP).find("exports no aiac_app_create()"), std::string::npos)
      << Refusal(AIAC_NOT_AN_APP);
}

}  // namespace
}  // namespace aiac::runtime
