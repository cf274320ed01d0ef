#include "spawner/job_state.h"

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>
#include <spdlog/fmt/fmt.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

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

// Reads `j` into the fields; a missing or mistyped one is kCorruption naming the record.
template <typename F>
Status Decode(const std::string& key, const json& j, F&& read) {
  try {
    read(j);
    return Status::Ok();
  } catch (const json::exception& e) {
    return Corruption("spawner state: record '" + key + "': " + e.what());
  }
}

}  // namespace

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

Status JobState::Put(const StoredRun& r) {
  const json j = {
      {"job_id", r.job_id}, {"job_file", r.job_file},     {"cwd", r.cwd},
      {"args", r.args},     {"supernodes", r.supernodes}, {"started_unix", r.started_unix},
      {"epoch", r.epoch}};
  return PutJson("run", j.dump());
}

Result<StoredRun> JobState::run() const {
  AIAC_ASSIGN_OR_RETURN(auto text, Get("run"));
  if (!text) {
    return NotFound("spawner state " + dir_ +
                    " holds no job: its spawner was lost before it had daemons; run the job again");
  }
  AIAC_ASSIGN_OR_RETURN(const json j, Parse("run", *text));
  StoredRun r;
  AIAC_RETURN_IF_ERROR(Decode("run", j, [&](const json& j) {
    j.at("job_id").get_to(r.job_id);
    j.at("job_file").get_to(r.job_file);
    j.at("cwd").get_to(r.cwd);
    j.at("args").get_to(r.args);
    j.at("supernodes").get_to(r.supernodes);
    j.at("started_unix").get_to(r.started_unix);
    j.at("epoch").get_to(r.epoch);
  }));
  return r;
}

namespace {

std::string Encode(const StoredDeployment& d) {
  json granted = json::array(), places = json::array();
  for (const auto& g : d.granted) {
    granted.push_back(
        {{"id", g.id}, {"address", g.address}, {"cluster", g.cluster}, {"power", g.power}});
  }
  for (const auto& p : d.places) {
    places.push_back({{"daemon", p.daemon},
                      {"address", p.address},
                      {"incarnation", p.incarnation},
                      {"waiting", p.waiting}});
  }
  return json{{"granted", granted},
              {"initial", d.initial},
              {"backups", d.backups},
              {"lost", d.lost},
              {"places", places}}
      .dump();
}

std::string Encode(const StoredProgress& p) {
  json replacements = json::array();
  for (const auto& r : p.replacements) {
    replacements.push_back({{"task", r.task},
                            {"failed", r.failed},
                            {"daemon", r.daemon},
                            {"restored_iteration", r.restored_iteration},
                            {"seconds_to_resume", r.seconds_to_resume}});
  }
  return json{{"started", p.started},
              {"tighten", p.tighten},
              {"failures", p.failures},
              {"replacements", replacements},
              {"trimmed", p.trimmed}}
      .dump();
}

std::string Encode(const LedgerHead& h) {
  json pending = json::array();
  for (const auto& p : h.pending) {
    pending.push_back({{"move", p.move},
                       {"from", p.from},
                       {"to", p.to},
                       {"work", p.work},
                       {"importing", p.importing},
                       {"count", p.count},
                       {"expect", p.expect}});
  }
  return json{{"next_move", h.next_move},
              {"total_items", h.total_items},
              {"applied", h.applied},
              {"pending", pending}}
      .dump();
}

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

constexpr std::string_view kPendingPrefix = "ledger/pending/";

}  // namespace

Result<StoredDeployment> JobState::deployment() const {
  AIAC_ASSIGN_OR_RETURN(auto text, Get("deployment"));
  if (!text) return Corruption("spawner state " + dir_ + " has no deployment record");
  AIAC_ASSIGN_OR_RETURN(const json j, Parse("deployment", *text));
  StoredDeployment d;
  AIAC_RETURN_IF_ERROR(Decode("deployment", j, [&](const json& j) {
    for (const auto& g : j.at("granted")) {
      d.granted.push_back({g.at("id").get<std::string>(), g.at("address").get<std::string>(),
                           g.at("cluster").get<std::string>(), g.at("power").get<double>()});
    }
    j.at("initial").get_to(d.initial);
    j.at("backups").get_to(d.backups);
    j.at("lost").get_to(d.lost);
    for (const auto& p : j.at("places")) {
      d.places.push_back({p.at("daemon").get<std::string>(), p.at("address").get<std::string>(),
                          p.at("incarnation").get<uint64_t>(), p.at("waiting").get<bool>()});
    }
  }));
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
  batch.Put("deployment", Encode(deployment));
  batch.Put("progress", Encode(progress));
  batch.Put("ledger/head", Encode(head));
  // The items of the moves under way (written once each); those of moves ended are deleted.
  std::set<uint64_t> held;
  for (const auto& p : head.pending) {
    if (!p.importing) continue;
    held.insert(p.move);
    if (!pending_stored_.count(p.move))
      batch.Put(std::string(kPendingPrefix) + std::to_string(p.move), p.items);
  }
  for (uint64_t move : pending_stored_) {
    if (!held.count(move)) batch.Delete(std::string(kPendingPrefix) + std::to_string(move));
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
  StoredProgress p;
  if (!text) return p;
  AIAC_ASSIGN_OR_RETURN(const json j, Parse("progress", *text));
  AIAC_RETURN_IF_ERROR(Decode("progress", j, [&](const json& j) {
    j.at("started").get_to(p.started);
    j.at("tighten").get_to(p.tighten);
    j.at("failures").get_to(p.failures);
    for (const auto& r : j.at("replacements")) {
      p.replacements.push_back({r.at("task").get<uint32_t>(), r.at("failed").get<std::string>(),
                                r.at("daemon").get<std::string>(),
                                r.at("restored_iteration").get<uint64_t>(),
                                r.at("seconds_to_resume").get<double>()});
    }
    j.at("trimmed").get_to(p.trimmed);
  }));
  return p;
}

Result<StoredLedger> JobState::ledger(size_t tasks) {
  StoredLedger ledger;
  ledger.head.applied.assign(tasks, 0);
  ledger.journals.resize(tasks);
  AIAC_ASSIGN_OR_RETURN(auto text, Get("ledger/head"));
  if (!text) return ledger;
  AIAC_ASSIGN_OR_RETURN(const json j, Parse("ledger/head", *text));
  LedgerHead& h = ledger.head;
  AIAC_RETURN_IF_ERROR(Decode("ledger/head", j, [&](const json& j) {
    j.at("next_move").get_to(h.next_move);
    j.at("total_items").get_to(h.total_items);
    j.at("applied").get_to(h.applied);
    for (const auto& p : j.at("pending")) {
      PendingMove m;
      p.at("move").get_to(m.move);
      p.at("from").get_to(m.from);
      p.at("to").get_to(m.to);
      p.at("work").get_to(m.work);
      p.at("importing").get_to(m.importing);
      p.at("count").get_to(m.count);
      p.at("expect").get_to(m.expect);
      h.pending.push_back(std::move(m));
    }
  }));
  if (h.applied.size() != tasks) return Corruption("spawner state: the ledger is for another job");
  for (auto& p : h.pending) {
    if (p.from >= tasks || p.to >= tasks) return Corruption("spawner state: a move names no task");
    if (!p.importing) continue;
    AIAC_ASSIGN_OR_RETURN(auto items, Get(std::string(kPendingPrefix) + std::to_string(p.move)));
    if (!items)
      return Corruption("spawner state: the items of move " + std::to_string(p.move) +
                        " are missing");
    p.items = std::move(*items);
  }
  for (const auto& p : h.pending) {
    if (p.importing) pending_stored_.insert(p.move);
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

Status JobState::Put(const StoredEnd& e) {
  return PutJson("end", json{{"status", e.status}, {"summary_line", e.summary_line}}.dump());
}

Result<std::optional<StoredEnd>> JobState::end() const {
  AIAC_ASSIGN_OR_RETURN(auto text, Get("end"));
  if (!text) return std::optional<StoredEnd>();
  AIAC_ASSIGN_OR_RETURN(const json j, Parse("end", *text));
  StoredEnd e;
  AIAC_RETURN_IF_ERROR(Decode("end", j, [&](const json& j) {
    j.at("status").get_to(e.status);
    j.at("summary_line").get_to(e.summary_line);
  }));
  return std::optional<StoredEnd>(std::move(e));
}

}  // namespace aiac::spawner
