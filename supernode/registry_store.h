// Where a super-node keeps its registry so that a restart loses nothing: an interface, and its
// RocksDB implementation (one key per daemon, "daemon/<id>", synced writes).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "supernode/daemon_record.h"

namespace rocksdb {
class DB;
}

namespace aiac::supernode {

class RegistryStore {
 public:
  virtual ~RegistryStore() = default;
  virtual Status Put(const DaemonRecord& record) = 0;
  virtual Status Delete(const std::string& id) = 0;
  // Every stored record; a record that does not decode fails the whole load (Corruption).
  virtual Result<std::vector<DaemonRecord>> LoadAll() = 0;
};

class RocksDbRegistryStore final : public RegistryStore {
 public:
  // Opens (creating if needed) the database in `dir`.
  static Result<std::unique_ptr<RocksDbRegistryStore>> Open(const std::string& dir);
  ~RocksDbRegistryStore() override;

  Status Put(const DaemonRecord& record) override;
  Status Delete(const std::string& id) override;
  Result<std::vector<DaemonRecord>> LoadAll() override;

 private:
  explicit RocksDbRegistryStore(std::unique_ptr<rocksdb::DB> db);
  std::unique_ptr<rocksdb::DB> db_;
};

}  // namespace aiac::supernode
