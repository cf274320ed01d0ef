// What every RocksDB-backed store here shares: status conversion, the free-space check that
// keeps RocksDB from ever writing on a full or read-only filesystem, and a logger that captures
// what WAL recovery reported at open.
//
// RocksDB asserts when it is asked to write again after a failed write, so a store checks its
// filesystem before every write (CheckWritable) and refuses writes after any failure until it
// reopens the database.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"

namespace rocksdb {
class DB;
class Status;
}  // namespace rocksdb

namespace aiac::storage {

// Free bytes a store's filesystem must keep before a write is attempted. 8 MiB: a memtable
// flush of the registry writes at most 1 MiB, the rest is slack.
inline constexpr uint64_t kMinFreeBytes = 8u << 20;

// OK, Corruption, ResourceExhausted (no space) or IoError, with `what` in front of RocksDB's text.
Status FromRocks(const rocksdb::Status& s, const std::string& what);

// Whether `dir` (or, if it does not exist yet, its nearest existing parent) can take writes:
// IoError when the filesystem is read-only, ResourceExhausted when less than `min_free` bytes
// are free. `what` names the store in messages ("registry store", "checkpoint store").
Status CheckWritable(const std::string& dir, const std::string& what,
                     uint64_t min_free = kMinFreeBytes);

// Creates `dir` if needed and opens the database the way every store here wants it: created
// if missing, paranoid checks, memtables of `write_buffer_bytes` (each flush writes at most that
// much, which the free-space margin must cover), and no flush at shutdown (writes are synced to
// the WAL, so closing never needs to write, not even on a full disk). Warnings RocksDB logs
// while opening (WAL recovery dropping records, for example) are appended to `warnings` when it
// is not null.
Result<std::unique_ptr<rocksdb::DB>> OpenRocksDb(const std::string& dir, const std::string& what,
                                                 size_t write_buffer_bytes,
                                                 std::vector<std::string>* warnings);

}  // namespace aiac::storage
