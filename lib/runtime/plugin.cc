#include "runtime/plugin.h"

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>

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

Result<std::string> PluginStore::FindFile(std::string_view sha256) {
  const std::string path = PathFor(sha256);
  std::error_code ignored;  // a file that cannot be touched is only evicted sooner
  std::filesystem::last_write_time(path, std::filesystem::file_time_type::clock::now(), ignored);
  auto bytes = ReadWholeFile(path);
  if (!bytes.ok()) return NotFound("plugin " + Hex(sha256) + " is not stored here");
  if (Sha256(*bytes) != sha256) {
    std::error_code ec;
    std::filesystem::remove(path, ec);  // corrupt copy: ask for it again
    return NotFound("stored plugin " + Hex(sha256) + " was corrupt");
  }
  handed_out_.insert(std::string(sha256));
  return path;
}

Result<std::shared_ptr<Plugin>> PluginStore::Find(std::string_view sha256) {
  const std::string key(sha256);
  if (auto it = loaded_.find(key); it != loaded_.end()) {
    std::error_code ignored;
    std::filesystem::last_write_time(PathFor(sha256), std::filesystem::file_time_type::clock::now(),
                                     ignored);
    return it->second;
  }
  AIAC_ASSIGN_OR_RETURN(std::string path, FindFile(sha256));
  auto plugin = Plugin::Load(path);
  if (plugin.ok()) loaded_[key] = *plugin;
  return plugin;
}

Result<std::string> PluginStore::Store(std::string_view sha256, std::string_view bytes) {
  if (Sha256(bytes) != sha256) {
    return InvalidArgument("plugin hash mismatch: the bytes received do not hash to " +
                           Hex(sha256));
  }
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) return IoError("cannot create " + dir_ + ": " + ec.message());
  const std::string path = PathFor(sha256);
  AIAC_RETURN_IF_ERROR(WriteFileAtomically(path, std::string(bytes)));
  return path;
}

Result<std::string> PluginStore::AddFile(std::string_view sha256, std::string_view bytes) {
  AIAC_ASSIGN_OR_RETURN(std::string path, Store(sha256, bytes));
  handed_out_.insert(std::string(sha256));
  return path;
}

Result<std::shared_ptr<Plugin>> PluginStore::Add(std::string_view sha256, std::string_view bytes) {
  AIAC_ASSIGN_OR_RETURN(std::string path, Store(sha256, bytes));
  auto plugin = Plugin::Load(path);
  if (plugin.ok()) loaded_[std::string(sha256)] = *plugin;
  return plugin;
}

uint64_t PluginStore::StoredBytes() const {
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    std::error_code size_ec;
    if (entry.path().extension() == ".so" && entry.is_regular_file(size_ec)) {
      const auto size = entry.file_size(size_ec);
      if (!size_ec) total += size;
    }
  }
  return total;
}

std::vector<std::string> PluginStore::Evict() {
  std::vector<std::string> removed;
  if (max_bytes_ == 0) return removed;
  struct Stored {
    std::filesystem::path path;
    uint64_t size;
    std::filesystem::file_time_type used;
  };
  std::vector<Stored> stored;
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    std::error_code e;
    if (entry.path().extension() != ".so" || !entry.is_regular_file(e)) continue;
    Stored s{entry.path(), entry.file_size(e), entry.last_write_time(e)};
    if (e) continue;
    total += s.size;
    stored.push_back(std::move(s));
  }
  std::sort(stored.begin(), stored.end(),
            [](const Stored& a, const Stored& b) { return a.used < b.used; });
  std::set<std::string> in_use;
  for (const auto& [hash, plugin] : loaded_) in_use.insert(PathFor(hash));
  for (const auto& hash : handed_out_) in_use.insert(PathFor(hash));
  for (const Stored& s : stored) {
    if (total <= max_bytes_) break;
    if (in_use.count(s.path.string())) continue;
    std::error_code e;
    if (std::filesystem::remove(s.path, e) && !e) {
      total -= s.size;
      removed.push_back(s.path.filename().string());
    }
  }
  return removed;
}

}  // namespace aiac::runtime
