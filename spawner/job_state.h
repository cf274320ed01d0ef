// What a spawner keeps of a running job so that another spawner can take it over
// (`aiac-spawner resume DIR`, docs/fault-tolerance.md "When the spawner is lost"): a RocksDB
// directory, each record one key holding JSON, every write synced before the step it records
// goes out on the network.
//   run          the job's id, the `run` command line and the directory it ran in, the
//                super-nodes it used, and the spawner's incarnation (1 for `run`, one more
//                per `resume`: the daemons follow only the newest, daemon/task_host.h)
//   deployment   the daemons granted, which of them are lost, and each task's daemon and
//                incarnation: what the resumed spawner adopts (AdoptTask)
//   progress     whether the tasks were started, the local tests' tightening so far, the
//                failures, replacements, app crashes and live balancing's figures so far, and
//                what each task's senders were told to drop of the values sent to it
//                (synchronous runs, TrimValues)
//   ledger/...   live balancing's ledger (move_ledger.h): its head (moves under way, with their
//                items in ledger/pending/MOVE), and each task's journal, one key per entry
//                (ledger/journal/TASK/INDEX), written once
//   end          the summary (its line and its JSON), once the run ended: `resume` then says
//                so and does nothing else
//
// Records that do not decode are kCorruption; a directory that is not a state directory is
// kInvalidArgument. Not thread-safe: the spawner's io thread writes it.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/status.h"
#include "spawner/deployment.h"
#include "spawner/granted_daemon.h"
#include "spawner/move_ledger.h"
#include "spawner/run_summary.h"

namespace rocksdb {
class DB;
}

namespace aiac::spawner {

struct StoredRun {
  std::string job_id;
  std::string job_file;                 // as given to `run`
  std::string cwd;                      // where `run` ran: relative paths in `args` are from there
  std::vector<std::string> args;        // `run`'s arguments after "run", as given
  std::vector<std::string> supernodes;  // the super-nodes it used, HOST:PORT
  int64_t started_unix = 0;
  uint64_t epoch = 1;  // the spawner's incarnation
  // The job file as the run read it, and the SHA-256 (hex) of the plugin its tasks run: a resumed
  // run goes on with that job whatever became of the file, and refuses another plugin. Both empty
  // in a state stored before 2026-12-07.
  std::string job_text;
  std::string plugin_sha256;
};

struct StoredDeployment {
  // Every daemon granted, the first `initial` at the start (the mapping and the app's split were
  // made for those), the others as replacements.
  std::vector<GrantedDaemon> granted;
  size_t initial = 0;
  std::vector<std::vector<uint32_t>>
      backups;  // per task: the tasks whose daemons keep its checkpoints
  std::vector<std::string> lost;
  std::vector<TaskPlace> places;  // per task
};

struct StoredProgress {
  bool started = false;
  double tighten = 1;
  uint32_t failures = 0;
  std::vector<Replacement> replacements;
  std::vector<uint64_t> trimmed;            // per task (synchronous runs); empty: none
  std::vector<AppCrashReport> app_crashes;  // the summary's, so far
  BalancingStats balancing;                 // the summary's, so far (its mode as the run's)
};

// A journal entry not stored yet: task `task`'s `index`th.
struct LedgerAppend {
  size_t task = 0, index = 0;
  const LedgerEntry* entry = nullptr;
};

struct StoredLedger {
  LedgerHead head;
  std::vector<std::vector<LedgerEntry>> journals;  // per task
};

struct StoredEnd {
  std::string status;        // RunStatusName
  std::string summary_line;  // the summary as `run` printed it
  // The summary as `--json` writes it (run_summary.h ToJson); "" in a state stored before
  // 2026-12-06. `resume --json` on an ended job writes it.
  std::string summary_json;
};

class JobState {
 public:
  // A new state directory for a job (created if missing); refused when `dir` holds one already.
  static Result<std::unique_ptr<JobState>> Create(const std::string& dir);
  // An existing one: kNotFound when `dir` does not exist or holds no database, kInvalidArgument
  // when it holds another database than a job state, kCorruption when RocksDB says so.
  static Result<std::unique_ptr<JobState>> Open(const std::string& dir);
  // The same, waiting up to `wait` while another process holds it (kUnavailable): a spawner
  // SIGKILLed a moment ago holds its lock until the kernel has torn it down, and a `resume` typed
  // right after the kill would be refused for it.
  static Result<std::unique_ptr<JobState>> Open(const std::string& dir,
                                                std::chrono::milliseconds wait);
  ~JobState();

  const std::string& dir() const { return dir_; }

  Status Put(const StoredRun& run);
  // The deployment, the progress and the ledger's changes, in one synced write.
  Status Save(const StoredDeployment& deployment, const StoredProgress& progress,
              const LedgerHead& head, const std::vector<LedgerAppend>& appended);
  Status Put(const StoredEnd& end);
  Result<StoredRun> run() const;
  Result<StoredDeployment> deployment() const;
  Result<StoredProgress> progress() const;  // defaults when never written
  // Empty journals and no move when never written; `tasks` journals.
  Result<StoredLedger> ledger(size_t tasks);
  Result<std::optional<StoredEnd>> end() const;

 private:
  JobState(std::string dir, std::unique_ptr<rocksdb::DB> db);
  Status PutJson(const std::string& key, const std::string& json);
  // The record's text; nullopt when it is missing.
  Result<std::optional<std::string>> Get(const std::string& key) const;

  std::string dir_;
  std::unique_ptr<rocksdb::DB> db_;
  std::set<uint64_t> pending_stored_;  // moves whose items ledger/pending holds
};

}  // namespace aiac::spawner
