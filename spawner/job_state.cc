#include "spawner/job_state.h"

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>
#include <spdlog/fmt/fmt.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "core/little_endian.h"
#include "storage/rocksdb_support.h"

namespace aiac::spawner {
namespace {

using nlohmann::json;

constexpr const char* kWhat = "spawner state";
constexpr const char* kFormatKey = "format";
constexpr const char* kFormat = "aiac-spawner-state 1";

// A record's JSON, or kCorruption naming it.
Result<json> Parse(const std::string& key, const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return Corruption("spawner state: record '" + key + "' is not JSON");
  return j;
}

// Record `key`'s value as a T: kCorruption naming the record when it is not JSON or a field is
// missing or mistyped.
template <typename T>
Result<T> DecodeAs(const std::string& key, const std::string& text) {
  AIAC_ASSIGN_OR_RETURN(const json j, Parse(key, text));
  try {
    return j.get<T>();
  } catch (const json::exception& e) {
    return Corruption("spawner state: record '" + key + "': " + e.what());
  }
}

// A field that records stored before it was kept lack: read when present, else left as it is.
template <typename T>
void GetIfPresent(const json& j, const char* key, T& out) {
  if (j.contains(key)) j.at(key).get_to(out);
}

}  // namespace

// Each record's JSON, its fields named once (to_json and from_json; a missing field throws, which
// DecodeAs turns into kCorruption). A move's items are stored apart (ledger/pending/MOVE).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(GrantedDaemon, id, address, cluster, power)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(TaskPlace, daemon, address, incarnation, waiting)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Replacement, task, failed, daemon, restored_iteration,
                                   seconds_to_resume)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(PendingMove, move, from, to, work, importing, count, expect)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(LedgerHead, next_move, total_items, applied, pending)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(StoredDeployment, granted, initial, backups, lost, places)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(AppCrashReport, task, daemon, iteration, cause, stderr_tail)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(BalancingStats, mode, migration, checks, redistributions, moves,
                                   abandoned, items_moved, items_between_clusters, seconds_moving,
                                   planned_seconds, predicted_gain, observed_gain, coordinators,
                                   relayed_reports)

void to_json(json& j, const StoredRun& r) {
  j = json{{"job_id", r.job_id}, {"job_file", r.job_file},     {"cwd", r.cwd},
           {"args", r.args},     {"supernodes", r.supernodes}, {"started_unix", r.started_unix},
           {"epoch", r.epoch},   {"job_text", r.job_text},     {"plugin_sha256", r.plugin_sha256}};
}
void from_json(const json& j, StoredRun& r) {
  j.at("job_id").get_to(r.job_id);
  j.at("job_file").get_to(r.job_file);
  j.at("cwd").get_to(r.cwd);
  j.at("args").get_to(r.args);
  j.at("supernodes").get_to(r.supernodes);
  j.at("started_unix").get_to(r.started_unix);
  j.at("epoch").get_to(r.epoch);
  // (kept since 2026-12-07: a state stored before holds neither)
  GetIfPresent(j, "job_text", r.job_text);
  GetIfPresent(j, "plugin_sha256", r.plugin_sha256);
}
void to_json(json& j, const StoredProgress& p) {
  j = json{{"started", p.started},           {"tighten", p.tighten}, {"failures", p.failures},
           {"replacements", p.replacements}, {"trimmed", p.trimmed}, {"app_crashes", p.app_crashes},
           {"balancing", p.balancing}};
}
void from_json(const json& j, StoredProgress& p) {
  j.at("started").get_to(p.started);
  j.at("tighten").get_to(p.tighten);
  j.at("failures").get_to(p.failures);
  j.at("replacements").get_to(p.replacements);
  j.at("trimmed").get_to(p.trimmed);
  // (kept since 2026-12-06: a state written before holds none)
  GetIfPresent(j, "app_crashes", p.app_crashes);
  // (kept since 2026-12-07)
  GetIfPresent(j, "balancing", p.balancing);
}
void to_json(json& j, const StoredEnd& e) {
  j = json{
      {"status", e.status}, {"summary_line", e.summary_line}, {"summary_json", e.summary_json}};
}
void from_json(const json& j, StoredEnd& e) {
  j.at("status").get_to(e.status);
  j.at("summary_line").get_to(e.summary_line);
  // (kept since 2026-12-06: an end stored before holds none)
  GetIfPresent(j, "summary_json", e.summary_json);
}

JobState::JobState(std::string dir, std::unique_ptr<rocksdb::DB> db)
    : dir_(std::move(dir)), db_(std::move(db)) {}
JobState::~JobState() = default;

Result<std::unique_ptr<JobState>> JobState::Create(const std::string& dir) {
  if (std::filesystem::exists(std::filesystem::path(dir) / "CURRENT")) {
    return InvalidArgument("state directory " + dir + " holds a job already");
  }
  AIAC_RETURN_IF_ERROR(storage::CheckWritable(dir, kWhat));
  AIAC_ASSIGN_OR_RETURN(auto db, storage::OpenRocksDb(dir, kWhat, 1u << 20, nullptr));
  auto state = std::unique_ptr<JobState>(new JobState(dir, std::move(db)));
  AIAC_RETURN_IF_ERROR(state->PutJson(kFormatKey, kFormat));
  return state;
}

Result<std::unique_ptr<JobState>> JobState::Open(const std::string& dir,
                                                 std::chrono::milliseconds wait) {
  const auto give_up = std::chrono::steady_clock::now() + wait;
  for (;;) {
    auto state = Open(dir);
    if (state.ok() || state.status().code() != StatusCode::kUnavailable ||
        std::chrono::steady_clock::now() >= give_up) {
      return state;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Result<std::unique_ptr<JobState>> JobState::Open(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return NotFound(dir + ": no such directory");
  if (!std::filesystem::exists(std::filesystem::path(dir) / "CURRENT", ec)) {
    return NotFound(dir + " is not a spawner state directory (no database in it)");
  }
  auto db = storage::OpenRocksDb(dir, kWhat, 1u << 20, nullptr);
  if (!db.ok() && db.status().message().find("lock") != std::string::npos) {
    // RocksDB's LOCK: another process has the job (a spawner supervising it).
    return Unavailable(dir + " is in use by another process (a spawner supervising the job)");
  }
  if (!db.ok()) return db.status();
  auto state = std::unique_ptr<JobState>(new JobState(dir, std::move(*db)));
  AIAC_ASSIGN_OR_RETURN(auto format, state->Get(kFormatKey));
  if (!format || *format != kFormat) {
    return InvalidArgument(
        dir + " is not a spawner state directory (" +
        (format ? "format '" + format->substr(0, 40) + "'" : std::string("another database")) +
        ")");
  }
  return state;
}

Status JobState::PutJson(const std::string& key, const std::string& text) {
  AIAC_RETURN_IF_ERROR(storage::CheckWritable(dir_, kWhat));
  rocksdb::WriteOptions w;
  w.sync = true;
  return storage::FromRocks(db_->Put(w, key, text), "spawner state: write " + key);
}

Result<std::optional<std::string>> JobState::Get(const std::string& key) const {
  std::string text;
  const rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), key, &text);
  if (s.IsNotFound()) return std::optional<std::string>();
  AIAC_RETURN_IF_ERROR(storage::FromRocks(s, "spawner state: read " + key));
  return std::optional<std::string>(std::move(text));
}

Status JobState::Put(const StoredRun& r) { return PutJson("run", json(r).dump()); }

Result<StoredRun> JobState::run() const {
  AIAC_ASSIGN_OR_RETURN(auto text, Get("run"));
  if (!text) {
    return NotFound("spawner state " + dir_ +
                    " holds no job: its spawner was lost before it had daemons; run the job again");
  }
  return DecodeAs<StoredRun>("run", *text);
}

namespace {

// A journal entry: its sequence number, kind and move (little-endian), then the items.
std::string Encode(const LedgerEntry& e) {
  std::string out;
  PutLittleEndian(out, e.moves, 8);
  PutLittleEndian(out, static_cast<uint64_t>(e.kind), 1);
  PutLittleEndian(out, e.move, 8);
  return out + e.items;
}

std::string JournalKey(size_t task, size_t index) {
  return fmt::format("ledger/journal/{:08}/{:012}", task, index);
}

std::string PendingKey(uint64_t move) { return "ledger/pending/" + std::to_string(move); }

}  // namespace

Result<StoredDeployment> JobState::deployment() const {
  AIAC_ASSIGN_OR_RETURN(auto text, Get("deployment"));
  if (!text) return Corruption("spawner state " + dir_ + " has no deployment record");
  AIAC_ASSIGN_OR_RETURN(StoredDeployment d, DecodeAs<StoredDeployment>("deployment", *text));
  if (d.initial > d.granted.size() || d.initial < d.places.size() ||
      d.backups.size() != d.places.size()) {
    return Corruption("spawner state: record 'deployment' does not add up");
  }
  return d;
}

Status JobState::Save(const StoredDeployment& deployment, const StoredProgress& progress,
                      const LedgerHead& head, const std::vector<LedgerAppend>& appended) {
  AIAC_RETURN_IF_ERROR(storage::CheckWritable(dir_, kWhat));
  rocksdb::WriteBatch batch;
  batch.Put("deployment", json(deployment).dump());
  batch.Put("progress", json(progress).dump());
  batch.Put("ledger/head", json(head).dump());
  // The items of the moves under way (written once each); those of moves ended are deleted.
  std::set<uint64_t> held;
  for (const auto& p : head.pending) {
    if (!p.importing) continue;
    held.insert(p.move);
    if (!pending_stored_.count(p.move)) batch.Put(PendingKey(p.move), p.items);
  }
  for (uint64_t move : pending_stored_) {
    if (!held.count(move)) batch.Delete(PendingKey(move));
  }
  for (const auto& a : appended) batch.Put(JournalKey(a.task, a.index), Encode(*a.entry));
  rocksdb::WriteOptions w;
  w.sync = true;
  AIAC_RETURN_IF_ERROR(storage::FromRocks(db_->Write(w, &batch), "spawner state: write"));
  pending_stored_ = std::move(held);
  return Status::Ok();
}

Result<StoredProgress> JobState::progress() const {
  AIAC_ASSIGN_OR_RETURN(auto text, Get("progress"));
  if (!text) return StoredProgress{};
  return DecodeAs<StoredProgress>("progress", *text);
}

Result<StoredLedger> JobState::ledger(size_t tasks) {
  StoredLedger ledger;
  ledger.head.applied.assign(tasks, 0);
  ledger.journals.resize(tasks);
  AIAC_ASSIGN_OR_RETURN(auto text, Get("ledger/head"));
  if (!text) return ledger;
  AIAC_ASSIGN_OR_RETURN(ledger.head, DecodeAs<LedgerHead>("ledger/head", *text));
  LedgerHead& h = ledger.head;
  if (h.applied.size() != tasks) return Corruption("spawner state: the ledger is for another job");
  for (auto& p : h.pending) {
    if (p.from >= tasks || p.to >= tasks) return Corruption("spawner state: a move names no task");
    if (!p.importing) continue;
    AIAC_ASSIGN_OR_RETURN(auto items, Get(PendingKey(p.move)));
    if (!items)
      return Corruption("spawner state: the items of move " + std::to_string(p.move) +
                        " are missing");
    p.items = std::move(*items);
    pending_stored_.insert(p.move);
  }
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  const std::string prefix = "ledger/journal/";
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    const std::string key = it->key().ToString();
    size_t task = 0, index = 0;
    if (std::sscanf(key.c_str() + prefix.size(), "%zu/%zu", &task, &index) != 2 || task >= tasks ||
        index != ledger.journals[task].size()) {
      return Corruption("spawner state: journal key " + key + " is out of order");
    }
    std::string_view in(it->value().data(), it->value().size());
    LedgerEntry e;
    uint8_t kind = 0;
    if (!TakeLittleEndian(in, e.moves) || !TakeLittleEndian(in, kind) ||
        !TakeLittleEndian(in, e.move) || kind > static_cast<uint8_t>(runtime::MoveKind::kConfirm)) {
      return Corruption("spawner state: journal entry " + key + " is truncated");
    }
    e.kind = static_cast<runtime::MoveKind>(kind);
    e.items = std::string(in);
    ledger.journals[task].push_back(std::move(e));
  }
  AIAC_RETURN_IF_ERROR(storage::FromRocks(it->status(), "spawner state: read the ledger"));
  return ledger;
}

Status JobState::Put(const StoredEnd& e) { return PutJson("end", json(e).dump()); }

Result<std::optional<StoredEnd>> JobState::end() const {
  AIAC_ASSIGN_OR_RETURN(auto text, Get("end"));
  if (!text) return std::optional<StoredEnd>();
  AIAC_ASSIGN_OR_RETURN(StoredEnd e, DecodeAs<StoredEnd>("end", *text));
  return std::optional<StoredEnd>(std::move(e));
}

}  // namespace aiac::spawner
