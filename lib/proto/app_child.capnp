# What a daemon and the child process running its task's app say to each other over a socketpair
# (daemon/app_child.h): while the task is set up, the daemon calls and the child answers each call
# once, after any log lines the app wrote meanwhile; from the `run` call on, the task's runner runs
# in the child: the daemon sends commands (no answer) and the child sends the runner's events
# (daemon/app_child_runner.h). Both ends are one build: no versioning.
@0x9311b1054e15c8ef;

$import "/capnp/c++.capnp".namespace("aiac::proto");
using Aiac = import "aiac.capnp";

struct ChildParam { key @0 :Text; value @1 :Text; }

# A neighbour's value the task absorbs before the call (app::Task::Absorb).
struct ChildValue { from @0 :UInt32; bytes @1 :Data; }

struct ChildCall {
  # Queued since the last call, applied in order first; then InputsFinal when setFinal.
  absorb @0 :List(ChildValue);
  setFinal @1 :Bool;
  inputsFinal @2 :Bool;
  union {
    make @3 :MakeTask;
    iterate @4 :Void;
    saveState @5 :Void;
    restoreState @6 :Data;
    resultSlice @7 :Void;
    tighten @8 :Float64;
    exportItems @9 :ExportItems;
    importItems @10 :Data;
    dropItems @11 :Data;
    # From here on: the runner (runtime/task_runner.h) in the child, and commands to it.
    run @12 :RunOptions;
    start @13 :Void;
    put @14 :Put;
    query @15 :UInt64;
    snapshot @16 :UInt64;
    tightenRun @17 :Float64;
    move @18 :Move;
    halt @19 :Void;
  }
  struct RunOptions {
    sync @0 :Bool;
    progressMs @1 :UInt64;
    checkpointEvery @2 :UInt64;
    checkpointMs @3 :UInt64;
    startIteration @4 :UInt64;
    incarnation @5 :UInt64;
    moves @6 :UInt64;
    outbox @7 :List(Aiac.ExportedItems);
    resend @8 :List(SentValues);  # runtime::RunnerOptions::resend
  }
  # The values a synchronous task sent after one iteration (runtime::SentValues).
  struct SentValues {
    iteration @0 :UInt64;
    values @1 :List(SentValue);
  }
  struct SentValue {
    to @0 :UInt32;
    bytes @1 :Data;
  }
  struct Put {
    from @0 :UInt32;
    iteration @1 :UInt64;
    bytes @2 :Data;
    converged @3 :Bool;
    seen @4 :UInt64;
    incarnation @5 :UInt64;
    seenIncarnation @6 :UInt64;
  }
  struct Move {
    move @0 :UInt64;
    kind @1 :Aiac.MoveKind;
    work @2 :Float64;
    items @3 :Data;
    to @4 :UInt32;
  }
  struct MakeTask {
    plugin @0 :Text;          # the plugin file, already checked against its hash and signature
    app @1 :Text;             # the app the job names: the plugin must hold it
    params @2 :List(ChildParam);
    tasks @3 :UInt32;
    baseDir @4 :Text;
    task @5 :UInt32;
    slice @6 :Data;
  }
  struct ExportItems { work @0 :Float64; to @1 :UInt32; }
}

# The task's figures after a call, which the runtime reads without a call of its own.
struct ChildFigures {
  localChange @0 :Float64;
  locallyConverged @1 :Bool;
  workDone @2 :Float64;
  remainingWork @3 :Float64;
  itemCount @4 :Int64;
}

struct ChildOutgoing { to @0 :UInt32; bytes @1 :Data; }

struct ChildReply {
  error @0 :Text;             # empty: the call succeeded
  errorCode @1 :UInt8;        # aiac::StatusCode of the error
  figures @2 :ChildFigures;
  union {
    none @3 :Void;
    made @4 :Made;
    iterated @5 :Bool;        # app::Task::Iterate's answer
    bytes @6 :Data;           # SaveState, ResultSlice, ExportItems
  }
  outgoing @7 :List(ChildOutgoing);  # after iterate: app::Task::TakeOutgoing
  notes @8 :Text;             # after make, restoreState, tighten: app::Task::Notes
  struct Made { dependencies @0 :List(UInt32); }
}

struct ChildLog { level @0 :UInt8; line @1 :Text; }

# What the runner in the child did (runtime::RunnerCallbacks, one member each).
struct RunnerEvent {
  union {
    values @0 :Values;
    localConvergence @1 :Convergence;
    progress @2 :Progress;
    answer @3 :Answer;
    snapshot @4 :Snapshot;
    checkpoint @5 :Checkpoint;
    moved @6 :Moved;
    finished @7 :Finished;
  }
  struct Value { to @0 :UInt32; bytes @1 :Data; seen @2 :UInt64; seenIncarnation @3 :UInt64; }
  struct Values { iteration @0 :UInt64; converged @1 :Bool; values @2 :List(Value); }
  struct Convergence { converged @0 :Bool; iteration @1 :UInt64; }
  struct Progress {
    iteration @0 :UInt64;
    change @1 :Float64;
    converged @2 :Bool;
    workDone @3 :Float64;
    remaining @4 :Float64;
    items @5 :Int64;
    moves @6 :UInt64;
    profile @7 :Aiac.TaskProfile;
    activeSeconds @8 :Float64;  # runtime::TaskMeasures::active_s
  }
  struct Answer { round @0 :UInt64; converged @1 :Bool; }
  struct Snapshot { round @0 :UInt64; slice @1 :Data; iteration @2 :UInt64; }
  struct Checkpoint { state @0 :Data; iteration @1 :UInt64; }
  struct Moved {
    move @0 :UInt64;
    kind @1 :Aiac.MoveKind;
    error @2 :Text;
    errorCode @3 :UInt8;
    items @4 :Data;
    count @5 :UInt64;
    itemsAfter @6 :Int64;
    moves @7 :UInt64;
  }
  struct Finished { slice @0 :Data; error @1 :Text; errorCode @2 :UInt8; iterations @3 :UInt64; }
}

struct ChildMessage {
  union {
    reply @0 :ChildReply;
    log @1 :ChildLog;
    event @2 :RunnerEvent;
  }
}
