// App plugins as files: loading with dlopen, and a daemon's store of
// received plugins (DATA_DIR/plugins/<sha256>.so), so a second job with the same plugin reuses
// the stored copy. A loaded library stays loaded for the life of the process (tasks point into
// its code). The store is a bounded cache: past its size, the files least recently used (their
// modification time, set at each use) go first, never one this process has loaded or handed
// to a child process. Not
// thread-safe: used from the io thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "app/app.h"
#include "core/hex.h"
#include "core/sha256.h"
#include "core/status.h"

namespace aiac::runtime {

using aiac::Hex;

// A loaded plugin: makes new App objects.
class Plugin {
 public:
  // dlopen()s `path` and finds the factory; errors name the file.
  static Result<std::shared_ptr<Plugin>> Load(const std::string& path);
  ~Plugin();
  std::unique_ptr<app::App> NewApp() const { return std::unique_ptr<app::App>(factory_()); }

 private:
  Plugin(void* handle, app::Factory factory) : handle_(handle), factory_(factory) {}
  void* handle_;
  app::Factory factory_;
};

class PluginStore {
 public:
  // `max_bytes`: the most the stored files may take together (0: no bound).
  explicit PluginStore(std::string dir, uint64_t max_bytes = 0)
      : dir_(std::move(dir)), max_bytes_(max_bytes) {}
  // The plugin with this hash, loading it from disk if it was stored before (and still hashes
  // right); NotFound when the daemon must be sent it. Marks its file as just used.
  Result<std::shared_ptr<Plugin>> Find(std::string_view sha256);
  // Checks `bytes` against `sha256`, stores and loads them. A mismatch is refused.
  Result<std::shared_ptr<Plugin>> Add(std::string_view sha256, std::string_view bytes);
  // As Find and Add, without loading the plugin here: the path of the stored file, which hashed
  // right, for a child process to load (daemon/app_child.h). Such a file is not evicted by this
  // process either.
  Result<std::string> FindFile(std::string_view sha256);
  Result<std::string> AddFile(std::string_view sha256, std::string_view bytes);
  // Removes stored plugins, least recently used first, until the store fits its bound; the ones
  // loaded by this process stay. The names of the files removed, for the log.
  std::vector<std::string> Evict();
  // What the stored plugins take on disk now.
  uint64_t StoredBytes() const;

 private:
  std::string PathFor(std::string_view sha256) const;
  // Checks `bytes` against `sha256` and writes them to PathFor: the path (hashed once, here).
  Result<std::string> Store(std::string_view sha256, std::string_view bytes);
  std::string dir_;
  uint64_t max_bytes_;
  std::map<std::string, std::shared_ptr<Plugin>> loaded_;
  std::set<std::string> handed_out_;  // FindFile's, by hash
};

}  // namespace aiac::runtime
