#include "checkpoint/rocksdb_checkpoint_store.h"

#include <fcntl.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <set>

#include "core/little_endian.h"
#include "core/read_file.h"
#include "core/write_all.h"
#include "storage/rocksdb_support.h"

namespace aiac::checkpoint {
namespace {

constexpr std::string_view kPrefix = "ck/";
constexpr const char* kWhat = "checkpoint store";
constexpr size_t kSuffixBytes = 4 + 8 + 8;  // task, incarnation, iteration

// Record header, little-endian: magic, checksum, incarnation, iteration, the proof's length and
// the proof (checkpoint/proof.h); then the state ("ACK3") or one byte, the slot holding it
// ("ACK4"). The header repeats what the key says, so a value stored under the wrong key is
// caught. Records of before proofs ("ACK1", "ACK2": no proof length, no proof) still read, with
// no proof: a daemon refuses to restore from them.
constexpr std::string_view kInline = "ACK3";
constexpr std::string_view kInFile = "ACK4";
constexpr std::string_view kInlineUnproved = "ACK1";
constexpr std::string_view kInFileUnproved = "ACK2";
constexpr size_t kHeaderBytes = 4 + 4 + 8 + 8;

void PutBigEndian(std::string& out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t GetBigEndian(std::string_view in, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<unsigned char>(in[i]);
  return v;
}

std::string JobPrefix(const std::string& job) { return std::string(kPrefix) + job + "/"; }

std::string KeyOf(const Checkpoint& c) {
  std::string key = JobPrefix(c.job);
  PutBigEndian(key, c.task, 4);
  PutBigEndian(key, c.incarnation, 8);
  PutBigEndian(key, c.iteration, 8);
  return key;
}

// job, task, incarnation, iteration of a key; false when it is not one of ours.
bool ParseKey(std::string_view key, Checkpoint& c) {
  if (!key.starts_with(kPrefix) || key.size() < kPrefix.size() + 2 + kSuffixBytes) return false;
  const size_t slash = key.size() - kSuffixBytes - 1;
  if (key[slash] != '/') return false;
  c.job = std::string(key.substr(kPrefix.size(), slash - kPrefix.size()));
  std::string_view suffix = key.substr(slash + 1);
  c.task = static_cast<uint32_t>(GetBigEndian(suffix, 4));
  c.incarnation = GetBigEndian(suffix.substr(4), 8);
  c.iteration = GetBigEndian(suffix.substr(12), 8);
  return true;
}

std::string Header(const Checkpoint& c, int slot) {
  std::string h(slot < 0 ? kInline : kInFile);
  PutLittleEndian(h, c.checksum, 4);
  PutLittleEndian(h, c.incarnation, 8);
  PutLittleEndian(h, c.iteration, 8);
  PutLittleEndian(h, c.proof.size(), 4);
  h.append(c.proof);
  if (slot >= 0) h.push_back(static_cast<char>(slot));
  return h;
}

// Where the parts of a stored value are: its slot (-1: the state is inline), its proof, and
// where an inline state starts. Null when it is not a record.
struct Layout {
  int slot = -1;
  std::string_view proof;
  size_t state_at = 0;
};
std::optional<Layout> LayoutOf(std::string_view value) {
  if (value.size() < kHeaderBytes) return std::nullopt;
  const std::string_view magic = value.substr(0, 4);
  Layout l;
  size_t at = kHeaderBytes;
  if (magic == kInline || magic == kInFile) {
    if (value.size() < at + 4) return std::nullopt;
    const uint64_t n = GetLittleEndian(value.substr(at), 4);
    at += 4;
    if (value.size() < at + n) return std::nullopt;
    l.proof = value.substr(at, n);
    at += n;
  } else if (magic != kInlineUnproved && magic != kInFileUnproved) {
    return std::nullopt;
  }
  if (magic == kInFile || magic == kInFileUnproved) {
    if (value.size() != at + 1) return std::nullopt;
    l.slot = static_cast<unsigned char>(value[at]);
    if (l.slot > 1) return std::nullopt;
  }
  l.state_at = at;
  return l;
}

// The slot a record's state is in, -1 when inline, -2 when it is no record.
int SlotOf(std::string_view value) {
  auto l = LayoutOf(value);
  return l ? l->slot : -2;
}

// Fills c.checksum, c.proof and, for an inline record, c.state from a stored value; Corruption
// when it is not a record or disagrees with its key.
Status Decode(std::string_view value, Checkpoint& c) {
  auto l = LayoutOf(value);
  if (!l) return Corruption(Describe(c) + " is not a checkpoint record");
  if (GetLittleEndian(value.substr(8), 8) != c.incarnation ||
      GetLittleEndian(value.substr(16), 8) != c.iteration) {
    return Corruption(Describe(c) + " holds the record of another iteration");
  }
  c.checksum = static_cast<uint32_t>(GetLittleEndian(value.substr(4), 4));
  c.proof.assign(l->proof);
  if (l->slot == -1) c.state.assign(value.substr(l->state_at));
  return Status::Ok();
}

Status SyncDir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return IoError("cannot open " + dir + ": " + std::strerror(errno));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) return IoError("cannot sync " + dir + ": " + std::strerror(err));
  return Status::Ok();
}

// Overwrites `path` with `bytes` in place (no truncation first, so a file of the same size
// keeps its blocks and only the data is synced); `created` tells whether the file is new.
Status WriteSynced(const std::string& path, std::string_view bytes, bool& created) {
  created = ::access(path.c_str(), F_OK) != 0;
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return IoError("cannot open " + path + ": " + std::strerror(errno));
  int err = WriteAll(fd, bytes);  // (from offset 0: the file was just opened)
  if (err == 0 && ::ftruncate(fd, static_cast<off_t>(bytes.size())) != 0) err = errno;
  if (err == 0 && ::fdatasync(fd) != 0) err = errno;
  ::close(fd);
  if (err == 0) return Status::Ok();
  const std::string why = "cannot write " + path + ": " + std::strerror(err);
  return err == ENOSPC ? ResourceExhausted(why) : IoError(why);
}

}  // namespace

Result<std::unique_ptr<rocksdb::DB>> RocksDbCheckpointStore::OpenDb(
    const std::string& dir, std::vector<std::string>* warnings) {
  // Records are small: large states are in slot files.
  return storage::OpenRocksDb(dir, kWhat, 4u << 20, warnings);
}

Result<std::unique_ptr<RocksDbCheckpointStore>> RocksDbCheckpointStore::Open(
    const std::string& dir) {
  std::vector<std::string> warnings;
  AIAC_ASSIGN_OR_RETURN(auto db, OpenDb(dir, &warnings));
  auto store =
      std::unique_ptr<RocksDbCheckpointStore>(new RocksDbCheckpointStore(dir, std::move(db)));
  store->recovery_warnings_ = std::move(warnings);
  AIAC_RETURN_IF_ERROR(store->BuildIndex());
  return store;
}

RocksDbCheckpointStore::RocksDbCheckpointStore(std::string dir, std::unique_ptr<rocksdb::DB> db)
    : dir_(std::move(dir)), states_dir_(dir_ + "/states"), db_(std::move(db)) {}
RocksDbCheckpointStore::~RocksDbCheckpointStore() = default;

std::string RocksDbCheckpointStore::SlotPath(const std::string& job, uint32_t task,
                                             int slot) const {
  // Job names are safe in file names (core/names.h).
  return states_dir_ + "/" + job + "-" + std::to_string(task) + "-" + std::to_string(slot) +
         ".state";
}

Status RocksDbCheckpointStore::BuildIndex() {
  index_.clear();
  std::set<std::string> used;  // slot files some record refers to
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  for (it->Seek(std::string(kPrefix)); it->Valid() && it->key().starts_with(kPrefix); it->Next()) {
    Checkpoint c;
    if (!ParseKey(it->key().ToStringView(), c)) continue;
    const int slot =
        std::max(SlotOf(it->value().ToStringView()), -1);  // a bad record fails at Load
    index_[{c.job, c.task}].push_back({it->key().ToString(), slot});
    if (slot >= 0) used.insert(SlotPath(c.job, c.task, slot));
  }
  AIAC_RETURN_IF_ERROR(storage::FromRocks(it->status(), "read " + std::string(kWhat) + " " + dir_));
  // A slot file no record refers to belongs to a job dropped, or a Put that never committed.
  std::error_code ec;
  std::filesystem::create_directories(states_dir_, ec);
  if (ec) return IoError("cannot create " + states_dir_ + ": " + ec.message());
  for (const auto& entry : std::filesystem::directory_iterator(states_dir_, ec)) {
    if (!used.count(entry.path().string())) std::filesystem::remove(entry.path(), ec);
  }
  return Status::Ok();
}

Status RocksDbCheckpointStore::Writable() {
  AIAC_RETURN_IF_ERROR(storage::CheckWritable(dir_, kWhat));
  if (broken_) {
    // RocksDB refuses (or asserts on) writes after a failed one; a fresh instance starts clean
    // from the synced WAL.
    db_.reset();
    AIAC_ASSIGN_OR_RETURN(auto db, OpenDb(dir_, nullptr));
    db_ = std::move(db);
    broken_ = false;
    AIAC_RETURN_IF_ERROR(BuildIndex());
  }
  return Status::Ok();
}

Result<bool> RocksDbCheckpointStore::Put(const Checkpoint& c) {
  AIAC_RETURN_IF_ERROR(CheckStorable(c));
  const std::string key = KeyOf(c);
  std::lock_guard lock(mu_);
  AIAC_RETURN_IF_ERROR(Writable());
  std::vector<Kept>& kept = index_[{c.job, c.task}];
  if (kept.size() >= kKeep && key < kept.front().key) return false;  // older than all we keep

  // What is kept afterwards: the newest kKeep of the old ones and this one.
  std::vector<Kept> after;
  for (const auto& k : kept) {
    if (k.key != key) after.push_back(k);
  }
  auto at = std::lower_bound(after.begin(), after.end(), key,
                             [](const Kept& k, const std::string& x) { return k.key < x; });
  at = after.insert(at, {key, -1});
  const size_t drop = after.size() > kKeep ? after.size() - kKeep : 0;
  std::set<int> busy;  // slots of checkpoints that stay
  for (size_t i = drop; i < after.size(); ++i) {
    if (after[i].key != key && after[i].slot >= 0) busy.insert(after[i].slot);
  }
  Kept& mine =
      *std::find_if(after.begin(), after.end(), [&](const Kept& k) { return k.key == key; });
  if (c.state.size() >= kInFileBytes) {
    mine.slot = busy.count(0) ? 1 : 0;
    bool created = false;
    AIAC_RETURN_IF_ERROR(WriteSynced(SlotPath(c.job, c.task, mine.slot), c.state, created));
    if (created) AIAC_RETURN_IF_ERROR(SyncDir(states_dir_));
  }
  rocksdb::WriteBatch batch;
  const std::string header = Header(c, mine.slot);
  const rocksdb::Slice key_part(key);
  const rocksdb::Slice value_parts[2] = {
      rocksdb::Slice(header),
      rocksdb::Slice(mine.slot >= 0 ? std::string_view() : std::string_view(c.state))};
  // The inline state is written from the caller's buffer, without a copy.
  batch.Put(rocksdb::SliceParts(&key_part, 1), rocksdb::SliceParts(value_parts, 2));
  for (size_t i = 0; i < drop; ++i) {
    if (after[i].key != key) batch.Delete(after[i].key);
  }
  rocksdb::WriteOptions w;
  w.sync = true;
  Status s = storage::FromRocks(db_->Write(w, &batch), "store " + Describe(c));
  if (!s.ok()) {
    broken_ = true;  // the index is rebuilt from what RocksDB kept at the reopen
    return s;
  }
  const bool stored = std::any_of(after.begin() + static_cast<std::ptrdiff_t>(drop), after.end(),
                                  [&](const Kept& k) { return k.key == key; });
  kept.assign(after.begin() + static_cast<std::ptrdiff_t>(drop), after.end());
  return stored;
}

Result<Loaded> RocksDbCheckpointStore::Load(const std::string& job, uint32_t task) {
  std::vector<Kept> kept;
  {
    std::lock_guard lock(mu_);
    auto it = index_.find({job, task});
    if (it != index_.end()) kept = it->second;
  }
  Loaded out;
  rocksdb::ReadOptions r;
  r.verify_checksums = true;
  for (auto k = kept.rbegin(); k != kept.rend(); ++k) {
    Checkpoint c;
    ParseKey(k->key, c);
    std::string value;
    Result<std::string> state = std::string();
    int slot = -1;
    {
      // Under the lock: a Put may be rewriting the other slot, never this one, but it may also
      // push this checkpoint out and reuse its slot.
      std::lock_guard lock(mu_);
      rocksdb::Status s = db_->Get(r, k->key, &value);
      if (s.IsNotFound()) continue;  // pushed out by a Put since we listed the keys
      if (!s.ok()) {
        out.skipped.push_back(storage::FromRocks(s, "read " + Describe(c)).message());
        continue;
      }
      slot = SlotOf(value);
      if (slot >= 0) state = ReadWholeFile(SlotPath(job, task, slot));
    }
    if (Status d = Decode(value, c); !d.ok()) {
      out.skipped.push_back(d.message());
      continue;
    }
    if (slot >= 0) {
      if (!state.ok()) {
        out.skipped.push_back(Describe(c) + ": " + state.status().message());
        continue;
      }
      c.state = std::move(*state);
    }
    if (!Verifies(c)) {
      out.skipped.push_back(Describe(c) + " fails its checksum");
      continue;
    }
    out.valid.push_back(std::move(c));
  }
  return out;
}

Status RocksDbCheckpointStore::DropJob(const std::string& job) {
  std::lock_guard lock(mu_);
  AIAC_RETURN_IF_ERROR(Writable());
  rocksdb::WriteBatch batch;
  std::vector<TaskKey> tasks;
  for (const auto& [task_key, kept] : index_) {
    if (task_key.first != job) continue;
    tasks.push_back(task_key);
    for (const auto& k : kept) batch.Delete(k.key);
  }
  if (tasks.empty()) return Status::Ok();
  rocksdb::WriteOptions w;
  w.sync = true;
  Status s = storage::FromRocks(db_->Write(w, &batch), "drop the checkpoints of job " + job);
  if (!s.ok()) {
    broken_ = true;
    return s;
  }
  for (const auto& t : tasks) {
    std::error_code ec;  // a file left behind is removed at the next Open
    for (int slot : {0, 1}) std::filesystem::remove(SlotPath(t.first, t.second, slot), ec);
    index_.erase(t);
  }
  return Status::Ok();
}

Result<std::vector<std::string>> RocksDbCheckpointStore::Jobs() {
  std::lock_guard lock(mu_);
  std::set<std::string> jobs;
  for (const auto& [task_key, kept] : index_) {
    if (!kept.empty()) jobs.insert(task_key.first);
  }
  return std::vector<std::string>(jobs.begin(), jobs.end());
}

}  // namespace aiac::checkpoint
