// CheckpointStore in a RocksDB directory of the daemon (docs/architecture.md, chosen dependencies).
//
// Key "ck/<job>/" + task, incarnation and iteration big-endian, so a task's checkpoints sort
// oldest first. Value: a header (magic, CRC32C of the state, incarnation, iteration) and the
// state, or, for a state of kInFileBytes or more, the header and a slot number: the state is
// then in <dir>/states/<job>-<task>-<slot>.state, written and synced before its record commits.
// Each task has two slot files, overwritten in turn (the one not holding the checkpoint that
// stays), so a steady stream of checkpoints creates no files and needs no directory sync.
//
// A Put is one synced WriteBatch: the new record and the deletion of those it pushes out of the
// newest kKeep, so a crash leaves the old set or the new one. A crash while a slot file is being
// rewritten can only damage the checkpoint being pushed out, whose checksum then fails; the
// newest one is in the other slot. Slot files no record refers to are removed at Open.
//
// Storage faults are errors, never aborts (storage/rocksdb_support.h): the filesystem is checked
// before every write, and after a failed write the database is reopened before the next one.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "checkpoint/checkpoint_store.h"

namespace rocksdb {
class DB;
}

namespace aiac::checkpoint {

class RocksDbCheckpointStore final : public CheckpointStore {
 public:
  // States from this size on are kept in slot files: through RocksDB's write-ahead log they
  // would cost about 1.5 ms per MB more, because Debian's RocksDB checksums its log without the
  // CPU's CRC instruction ("Fast CRC32 supported: Not supported on x86" in its LOG).
  static constexpr size_t kInFileBytes = 64u << 10;

  // Opens (creating if needed) the database in `dir`.
  static Result<std::unique_ptr<RocksDbCheckpointStore>> Open(const std::string& dir);
  ~RocksDbCheckpointStore() override;

  Result<bool> Put(const Checkpoint& c) override;
  Result<Loaded> Load(const std::string& job, uint32_t task) override;
  Status DropJob(const std::string& job) override;
  Result<std::vector<std::string>> Jobs() override;

  // What RocksDB reported while recovering its write-ahead log at Open (records were lost).
  const std::vector<std::string>& recovery_warnings() const { return recovery_warnings_; }

 private:
  using TaskKey = std::pair<std::string, uint32_t>;
  struct Kept {
    std::string key;
    int slot;  // -1: the state is in the record
  };
  RocksDbCheckpointStore(std::string dir, std::unique_ptr<rocksdb::DB> db);
  static Result<std::unique_ptr<rocksdb::DB>> OpenDb(const std::string& dir,
                                                     std::vector<std::string>* warnings);
  Status BuildIndex();
  // The filesystem check, and a reopen after a failed write. Caller holds mu_.
  Status Writable();
  std::string SlotPath(const std::string& job, uint32_t task, int slot) const;

  std::string dir_;
  std::string states_dir_;  // <dir>/states
  std::mutex mu_;
  std::unique_ptr<rocksdb::DB> db_;
  bool broken_ = false;
  std::map<TaskKey, std::vector<Kept>> index_;  // per task, oldest first
  std::vector<std::string> recovery_warnings_;
};

}  // namespace aiac::checkpoint
