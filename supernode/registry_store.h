// Where a super-node keeps its registry so that a restart loses nothing: an interface, and its
// RocksDB implementation (one key per daemon, "daemon/<id>", synced writes), which also keeps
// the enrollment tokens redeemed here ("token/<hex id>", supernode/enroller.h).
//
// Storage faults are errors, never aborts: RocksDB asserts when it is asked to write again after
// a failed write, so the RocksDB store checks its filesystem before every write
// (storage::CheckWritable: read-only, or too little free space: refused without touching
// RocksDB), and after any failed write it refuses every write until ReplaceAll reopens it. What WAL
// recovery reported while opening (a corrupt or truncated log drops the records after the damage)
// is kept for the caller to log.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "supernode/daemon_record.h"
#include "supernode/enroller.h"

namespace rocksdb {
class DB;
}

namespace aiac::supernode {

class RegistryStore {
 public:
  virtual ~RegistryStore() = default;
  virtual Status Put(const DaemonRecord& record) = 0;
  // Several records at once (a grant's or a release's): one synced write for all where the store
  // can (an fsync per record made granting 100 daemons take 150-200 ms); record by record here.
  virtual Status PutAll(const std::vector<DaemonRecord>& records) {
    for (const auto& r : records) AIAC_RETURN_IF_ERROR(Put(r));
    return Status::Ok();
  }
  virtual Status Delete(const std::string& id) = 0;
  // Every stored record; a record that does not decode fails the whole load (Corruption).
  virtual Result<std::vector<DaemonRecord>> LoadAll() = 0;
  // Makes the store hold exactly `records` (one atomic batch), after a period in which writes
  // failed. May reopen the underlying database.
  virtual Status ReplaceAll(const std::vector<DaemonRecord>& records) = 0;
};

class RocksDbRegistryStore final : public RegistryStore, public UsedTokens {
 public:
  // Opens (creating if needed) the database in `dir`; refused at once when CheckWritable fails.
  static Result<std::unique_ptr<RocksDbRegistryStore>> Open(const std::string& dir);
  ~RocksDbRegistryStore() override;

  Status Put(const DaemonRecord& record) override;
  // One atomic, synced batch.
  Status PutAll(const std::vector<DaemonRecord>& records) override;
  Status Delete(const std::string& id) override;
  Result<std::vector<DaemonRecord>> LoadAll() override;
  Status ReplaceAll(const std::vector<DaemonRecord>& records) override;
  Result<bool> Claim(const std::string& token_id) override;

  // Warnings RocksDB gave while recovering its write-ahead log at Open (for example "dropping
  // 11600 bytes; Corruption: truncated record body"): each means records were lost.
  const std::vector<std::string>& recovery_warnings() const { return recovery_warnings_; }

 private:
  RocksDbRegistryStore(std::string dir, std::unique_ptr<rocksdb::DB> db);
  static Result<std::unique_ptr<rocksdb::DB>> OpenDb(const std::string& dir,
                                                     std::vector<std::string>* warnings);
  // CheckWritable, and the refusal after a failed write.
  Status Writable();
  Status Track(Status status);

  std::string dir_;
  std::unique_ptr<rocksdb::DB> db_;
  bool broken_ = false;  // a write failed: no more writes until reopened
  std::vector<std::string> recovery_warnings_;
};

}  // namespace aiac::supernode
