#include "supernode/registry_store.h"

#include <sys/statvfs.h>

#include <cstdarg>
#include <cstdio>
#include <filesystem>

#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

namespace aiac::supernode {
namespace {

constexpr std::string_view kPrefix = "daemon/";

Status FromRocks(const rocksdb::Status& s, const std::string& what) {
  if (s.ok()) return Status::Ok();
  if (s.IsCorruption()) return Corruption(what + ": " + s.ToString());
  if (s.IsNoSpace()) return ResourceExhausted(what + ": " + s.ToString());
  return IoError(what + ": " + s.ToString());
}

std::string KiB(uint64_t bytes) { return std::to_string(bytes / 1024) + " KiB"; }

}  // namespace

// Keeps what RocksDB says at WARN level or above while a capture is on (WAL recovery at Open).
class RocksDbRegistryStore::CaptureLogger : public rocksdb::Logger {
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

Status CheckWritable(const std::string& dir, uint64_t min_free) {
  std::filesystem::path p(dir);
  std::error_code ec;
  while (!p.empty() && !std::filesystem::exists(p, ec)) p = p.parent_path();
  if (p.empty()) p = ".";
  struct statvfs fs {};
  if (::statvfs(p.c_str(), &fs) != 0) return IoError("cannot inspect the filesystem of " + dir);
  if (fs.f_flag & ST_RDONLY) return IoError("registry store " + dir + " is on a read-only filesystem");
  const uint64_t free_bytes = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
  if (free_bytes < min_free) {
    return ResourceExhausted("registry store " + dir + ": only " + KiB(free_bytes) +
                             " free on its filesystem, " + KiB(min_free) + " needed");
  }
  return Status::Ok();
}

Result<std::unique_ptr<rocksdb::DB>> RocksDbRegistryStore::OpenDb(
    const std::string& dir, std::vector<std::string>* warnings) {
  AIAC_RETURN_IF_ERROR(CheckWritable(dir));
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return IoError("cannot create registry store " + dir + ": " + ec.message());
  rocksdb::Options options;
  options.create_if_missing = true;
  options.paranoid_checks = true;
  // Small flushes, so the free-space margin covers any one of them; no flush at shutdown (the
  // synced WAL already holds everything), so closing never writes on a full disk.
  options.write_buffer_size = 1u << 20;
  options.avoid_flush_during_shutdown = true;
  auto logger = std::make_shared<CaptureLogger>(warnings);
  options.info_log = logger;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(options, dir, &raw);
  logger->Stop();
  if (!s.ok()) return FromRocks(s, "open registry store " + dir);
  return std::unique_ptr<rocksdb::DB>(raw);
}

Result<std::unique_ptr<RocksDbRegistryStore>> RocksDbRegistryStore::Open(const std::string& dir) {
  std::vector<std::string> warnings;
  auto db = OpenDb(dir, &warnings);
  if (!db.ok()) return db.status();
  auto store = std::unique_ptr<RocksDbRegistryStore>(new RocksDbRegistryStore(dir, std::move(*db)));
  store->recovery_warnings_ = std::move(warnings);
  return store;
}

RocksDbRegistryStore::RocksDbRegistryStore(std::string dir, std::unique_ptr<rocksdb::DB> db)
    : dir_(std::move(dir)), db_(std::move(db)) {}
RocksDbRegistryStore::~RocksDbRegistryStore() = default;

Status RocksDbRegistryStore::Writable() {
  if (broken_) {
    return IoError("registry store " + dir_ + " stopped taking writes after a failed write");
  }
  return CheckWritable(dir_);
}

Status RocksDbRegistryStore::Track(Status status) {
  if (!status.ok()) broken_ = true;
  return status;
}

Status RocksDbRegistryStore::Put(const DaemonRecord& record) {
  AIAC_RETURN_IF_ERROR(Writable());
  rocksdb::WriteOptions w;
  w.sync = true;
  return Track(FromRocks(db_->Put(w, std::string(kPrefix) + record.id, Encode(record)),
                         "store daemon " + record.id));
}

Status RocksDbRegistryStore::Delete(const std::string& id) {
  AIAC_RETURN_IF_ERROR(Writable());
  rocksdb::WriteOptions w;
  w.sync = true;
  return Track(FromRocks(db_->Delete(w, std::string(kPrefix) + id), "delete daemon " + id));
}

Result<std::vector<DaemonRecord>> RocksDbRegistryStore::LoadAll() {
  rocksdb::ReadOptions r;
  r.verify_checksums = true;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(r));
  std::vector<DaemonRecord> out;
  for (it->Seek(std::string(kPrefix)); it->Valid() && it->key().starts_with(kPrefix); it->Next()) {
    auto rec = Decode(it->value().ToStringView());
    if (!rec.ok()) return rec.status();
    out.push_back(std::move(*rec));
  }
  AIAC_RETURN_IF_ERROR(FromRocks(it->status(), "read registry"));
  return out;
}

Status RocksDbRegistryStore::ReplaceAll(const std::vector<DaemonRecord>& records) {
  AIAC_RETURN_IF_ERROR(CheckWritable(dir_));
  if (broken_) {
    // The old instance may hold a failed writer; a fresh one starts clean from the synced WAL.
    db_.reset();
    auto db = OpenDb(dir_, nullptr);
    if (!db.ok()) return db.status();
    db_ = std::move(*db);
    broken_ = false;
  }
  rocksdb::WriteBatch batch;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  for (it->Seek(std::string(kPrefix)); it->Valid() && it->key().starts_with(kPrefix); it->Next()) {
    batch.Delete(it->key());
  }
  AIAC_RETURN_IF_ERROR(FromRocks(it->status(), "read registry"));
  it.reset();
  for (const auto& r : records) batch.Put(std::string(kPrefix) + r.id, Encode(r));
  rocksdb::WriteOptions w;
  w.sync = true;
  return Track(FromRocks(db_->Write(w, &batch), "rewrite registry store " + dir_));
}

}  // namespace aiac::supernode
