#include "supernode/registry_store.h"

#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include "core/hex.h"
#include "storage/rocksdb_support.h"

namespace aiac::supernode {
namespace {

constexpr std::string_view kPrefix = "daemon/";
constexpr std::string_view kTokenPrefix = "token/";
constexpr const char* kWhat = "registry store";

}  // namespace

Result<std::unique_ptr<rocksdb::DB>> RocksDbRegistryStore::OpenDb(
    const std::string& dir, std::vector<std::string>* warnings) {
  // Small flushes, so the free-space margin covers any one of them.
  return storage::OpenRocksDb(dir, kWhat, 1u << 20, warnings);
}

Result<std::unique_ptr<RocksDbRegistryStore>> RocksDbRegistryStore::Open(const std::string& dir) {
  std::vector<std::string> warnings;
  AIAC_ASSIGN_OR_RETURN(auto db, OpenDb(dir, &warnings));
  auto store = std::unique_ptr<RocksDbRegistryStore>(new RocksDbRegistryStore(dir, std::move(db)));
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
  return storage::CheckWritable(dir_, kWhat);
}

Status RocksDbRegistryStore::Track(Status status) {
  if (!status.ok()) broken_ = true;
  return status;
}

Status RocksDbRegistryStore::Put(const DaemonRecord& record) {
  AIAC_RETURN_IF_ERROR(Writable());
  rocksdb::WriteOptions w;
  w.sync = true;
  return Track(storage::FromRocks(db_->Put(w, std::string(kPrefix) + record.id, Encode(record)),
                                  "store daemon " + record.id));
}

Status RocksDbRegistryStore::PutAll(const std::vector<DaemonRecord>& records) {
  if (records.empty()) return Status::Ok();
  AIAC_RETURN_IF_ERROR(Writable());
  rocksdb::WriteBatch batch;
  for (const auto& r : records) batch.Put(std::string(kPrefix) + r.id, Encode(r));
  rocksdb::WriteOptions w;
  w.sync = true;
  return Track(storage::FromRocks(db_->Write(w, &batch),
                                  "store " + std::to_string(records.size()) + " daemons"));
}

Result<bool> RocksDbRegistryStore::Claim(const std::string& token_id) {
  const std::string key = std::string(kTokenPrefix) + Hex(token_id);
  std::string ignored;
  const rocksdb::Status found = db_->Get(rocksdb::ReadOptions(), key, &ignored);
  if (found.ok()) return false;
  if (!found.IsNotFound()) {
    AIAC_RETURN_IF_ERROR(storage::FromRocks(found, "read the used enrollment tokens"));
  }
  AIAC_RETURN_IF_ERROR(Writable());
  rocksdb::WriteOptions w;
  w.sync = true;
  AIAC_RETURN_IF_ERROR(
      Track(storage::FromRocks(db_->Put(w, key, ""), "record a used enrollment token")));
  return true;
}

Status RocksDbRegistryStore::Delete(const std::string& id) {
  AIAC_RETURN_IF_ERROR(Writable());
  rocksdb::WriteOptions w;
  w.sync = true;
  return Track(
      storage::FromRocks(db_->Delete(w, std::string(kPrefix) + id), "delete daemon " + id));
}

Result<std::vector<DaemonRecord>> RocksDbRegistryStore::LoadAll() {
  rocksdb::ReadOptions r;
  r.verify_checksums = true;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(r));
  std::vector<DaemonRecord> out;
  for (it->Seek(std::string(kPrefix)); it->Valid() && it->key().starts_with(kPrefix); it->Next()) {
    AIAC_ASSIGN_OR_RETURN(auto rec, Decode(it->value().ToStringView()));
    out.push_back(std::move(rec));
  }
  AIAC_RETURN_IF_ERROR(storage::FromRocks(it->status(), "read registry"));
  return out;
}

Status RocksDbRegistryStore::ReplaceAll(const std::vector<DaemonRecord>& records) {
  AIAC_RETURN_IF_ERROR(storage::CheckWritable(dir_, kWhat));
  if (broken_) {
    // The old instance may hold a failed writer; a fresh one starts clean from the synced WAL.
    db_.reset();
    AIAC_ASSIGN_OR_RETURN(auto db, OpenDb(dir_, nullptr));
    db_ = std::move(db);
    broken_ = false;
  }
  rocksdb::WriteBatch batch;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  for (it->Seek(std::string(kPrefix)); it->Valid() && it->key().starts_with(kPrefix); it->Next()) {
    batch.Delete(it->key());
  }
  AIAC_RETURN_IF_ERROR(storage::FromRocks(it->status(), "read registry"));
  it.reset();
  for (const auto& r : records) batch.Put(std::string(kPrefix) + r.id, Encode(r));
  rocksdb::WriteOptions w;
  w.sync = true;
  return Track(storage::FromRocks(db_->Write(w, &batch), "rewrite registry store " + dir_));
}

}  // namespace aiac::supernode
