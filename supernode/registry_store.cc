#include "supernode/registry_store.h"

#include <rocksdb/db.h>
#include <rocksdb/options.h>

namespace aiac::supernode {
namespace {

constexpr std::string_view kPrefix = "daemon/";

Status FromRocks(const rocksdb::Status& s, const std::string& what) {
  if (s.ok()) return Status::Ok();
  if (s.IsCorruption()) return Corruption(what + ": " + s.ToString());
  return IoError(what + ": " + s.ToString());
}

}  // namespace

Result<std::unique_ptr<RocksDbRegistryStore>> RocksDbRegistryStore::Open(const std::string& dir) {
  rocksdb::Options options;
  options.create_if_missing = true;
  options.paranoid_checks = true;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(options, dir, &raw);
  if (!s.ok()) return FromRocks(s, "open registry database " + dir);
  return std::unique_ptr<RocksDbRegistryStore>(
      new RocksDbRegistryStore(std::unique_ptr<rocksdb::DB>(raw)));
}

RocksDbRegistryStore::RocksDbRegistryStore(std::unique_ptr<rocksdb::DB> db) : db_(std::move(db)) {}
RocksDbRegistryStore::~RocksDbRegistryStore() = default;

Status RocksDbRegistryStore::Put(const DaemonRecord& record) {
  rocksdb::WriteOptions w;
  w.sync = true;
  return FromRocks(db_->Put(w, std::string(kPrefix) + record.id, Encode(record)),
                   "store daemon " + record.id);
}

Status RocksDbRegistryStore::Delete(const std::string& id) {
  rocksdb::WriteOptions w;
  w.sync = true;
  return FromRocks(db_->Delete(w, std::string(kPrefix) + id), "delete daemon " + id);
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

}  // namespace aiac::supernode
