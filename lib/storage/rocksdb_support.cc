#include "storage/rocksdb_support.h"

#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/options.h>
#include <sys/statvfs.h>

#include <cstdarg>
#include <cstdio>
#include <filesystem>

namespace aiac::storage {
namespace {

std::string KiB(uint64_t bytes) { return std::to_string(bytes / 1024) + " KiB"; }

// Keeps what RocksDB says at WARN level or above while a capture is on (WAL recovery at Open).
class CaptureLogger : public rocksdb::Logger {
 public:
  explicit CaptureLogger(std::vector<std::string>* into)
      : rocksdb::Logger(rocksdb::WARN_LEVEL), into_(into) {}
  using rocksdb::Logger::Logv;
  void Logv(const rocksdb::InfoLogLevel level, const char* format, va_list ap) override {
    if (into_ == nullptr || level < rocksdb::WARN_LEVEL || into_->size() >= 16) return;
    char line[512];
    std::vsnprintf(line, sizeof line, format, ap);
    into_->emplace_back(line);
  }
  void Logv(const char* format, va_list ap) override { Logv(rocksdb::INFO_LEVEL, format, ap); }
  void Stop() { into_ = nullptr; }

 private:
  std::vector<std::string>* into_;
};

}  // namespace

Status FromRocks(const rocksdb::Status& s, const std::string& what) {
  if (s.ok()) return Status::Ok();
  if (s.IsCorruption()) return Corruption(what + ": " + s.ToString());
  if (s.IsNoSpace()) return ResourceExhausted(what + ": " + s.ToString());
  return IoError(what + ": " + s.ToString());
}

Status CheckWritable(const std::string& dir, const std::string& what, uint64_t min_free) {
  std::filesystem::path p(dir);
  std::error_code ec;
  while (!p.empty() && !std::filesystem::exists(p, ec)) p = p.parent_path();
  if (p.empty()) p = ".";
  struct statvfs fs {};
  if (::statvfs(p.c_str(), &fs) != 0) return IoError("cannot inspect the filesystem of " + dir);
  if (fs.f_flag & ST_RDONLY) return IoError(what + " " + dir + " is on a read-only filesystem");
  const uint64_t free_bytes = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
  if (free_bytes < min_free) {
    return ResourceExhausted(what + " " + dir + ": only " + KiB(free_bytes) +
                             " free on its filesystem, " + KiB(min_free) + " needed");
  }
  return Status::Ok();
}

Result<std::unique_ptr<rocksdb::DB>> OpenRocksDb(const std::string& dir, const std::string& what,
                                                 size_t write_buffer_bytes,
                                                 std::vector<std::string>* warnings) {
  AIAC_RETURN_IF_ERROR(CheckWritable(dir, what));
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return IoError("cannot create " + what + " " + dir + ": " + ec.message());
  rocksdb::Options options;
  options.create_if_missing = true;
  options.paranoid_checks = true;
  options.write_buffer_size = write_buffer_bytes;
  options.avoid_flush_during_shutdown = true;
  auto logger = std::make_shared<CaptureLogger>(warnings);
  options.info_log = logger;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(options, dir, &raw);
  logger->Stop();
  if (!s.ok()) return FromRocks(s, "open " + what + " " + dir);
  return std::unique_ptr<rocksdb::DB>(raw);
}

}  // namespace aiac::storage
