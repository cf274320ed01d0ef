#include "runtime/plugin.h"

#include <dlfcn.h>

#include <filesystem>
#include <optional>

#include "core/atomic_file.h"
#include "core/hex.h"
#include "core/read_file.h"

namespace aiac::runtime {

Result<std::shared_ptr<Plugin>> Plugin::Load(const std::string& path) {
  // dlopen searches the library path for a name without a slash: "my.so" in the current
  // folder must be named as a path.
  std::error_code ec;
  const std::string file = std::filesystem::absolute(path, ec).string();
  void* handle = dlopen((ec ? path : file).c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) return InvalidArgument(std::string("cannot load plugin: ") + dlerror());
  // The version first: a plugin of another API version has other classes, and calling into
  // them (even api_version()) would be undefined.
  auto version = reinterpret_cast<app::ApiVersionFunction>(dlsym(handle, app::kApiVersionSymbol));
  auto factory = reinterpret_cast<app::Factory>(dlsym(handle, app::kFactorySymbol));
  if (!factory) {
    dlclose(handle);
    return InvalidArgument("plugin " + path + " exports no " + app::kFactorySymbol +
                           "() (is it an aiac app? AIAC_DEFINE_APP writes it)");
  }
  const std::optional<int> built_for = version ? std::optional<int>(version()) : std::nullopt;
  if (built_for != app::kApiVersion) {
    dlclose(handle);
    return InvalidArgument("plugin " + path + " was built for app API " +
                           (built_for ? std::to_string(*built_for) : std::string("8 or older")) +
                           ", this aiac speaks " + std::to_string(app::kApiVersion) +
                           ": rebuild it against this aiac's headers");
  }
  auto plugin = std::shared_ptr<Plugin>(new Plugin(handle, factory));
  return plugin;
}

// Loaded code may still be referenced by objects the process keeps until exit: never unload.
Plugin::~Plugin() = default;

std::string PluginStore::PathFor(std::string_view sha256) const {
  return dir_ + "/" + Hex(sha256) + ".so";
}

Result<std::shared_ptr<Plugin>> PluginStore::Find(std::string_view sha256) {
  const std::string key(sha256);
  if (auto it = loaded_.find(key); it != loaded_.end()) return it->second;
  const std::string path = PathFor(sha256);
  auto bytes = ReadWholeFile(path);
  if (!bytes.ok()) return NotFound("plugin " + Hex(sha256) + " is not stored here");
  if (Sha256(*bytes) != sha256) {
    std::error_code ec;
    std::filesystem::remove(path, ec);  // corrupt copy: ask for it again
    return NotFound("stored plugin " + Hex(sha256) + " was corrupt");
  }
  auto plugin = Plugin::Load(path);
  if (plugin.ok()) loaded_[key] = *plugin;
  return plugin;
}

Result<std::shared_ptr<Plugin>> PluginStore::Add(std::string_view sha256, std::string_view bytes) {
  if (Sha256(bytes) != sha256) {
    return InvalidArgument("plugin hash mismatch: the bytes received do not hash to " +
                           Hex(sha256));
  }
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) return IoError("cannot create " + dir_ + ": " + ec.message());
  AIAC_RETURN_IF_ERROR(WriteFileAtomically(PathFor(sha256), std::string(bytes)));
  return Find(sha256);
}

}  // namespace aiac::runtime
