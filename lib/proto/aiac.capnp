# Every message exchanged by aiac processes. One frame on the wire = one Envelope, in Cap'n
# Proto's standard stream framing. Fields and union members may be added; never renumber.
@0xc4f3b6a1e2d97a50;

$import "/capnp/c++.capnp".namespace("aiac::proto");

enum Role {
  supernode @0;
  daemon @1;
  spawner @2;
}

enum DaemonState {
  free @0;
  busy @1;
}

# A daemon as the registry knows it.
struct DaemonInfo {
  id @0 :Text;
  address @1 :Text;         # HOST:PORT where the daemon accepts spawners and neighbours
  cluster @2 :Text;
  power @3 :Float64;        # relative computing power (benchmark or config)
  cores @4 :UInt32;
  state @5 :DaemonState;
  job @6 :Text;             # the job it is granted to, when busy
  owner @7 :Text;           # id of the super-node it is registered with
  version @8 :Text;         # the aiac version the daemon runs ("0.1.0"), as it registered
  # In digests and status reports only (the owner fills them in when it sends them):
  running @9 :Bool;         # its last heartbeat said it runs a task (busy and not running: granted)
  heartbeatAgeMs @10 :Int64;  # since its last heartbeat, at the owner, when the record was sent
}

# --- handshake (first frames of every connection, both directions) ---
# Sent inside TLS (net/tls.h), after the PSK handshake proved the key.
struct Hello {
  # The protocol versions the sender speaks: `version` to `maxVersion` (net/hello.h). A version 3
  # node sent its one version in `version` and knew no `maxVersion` (read as 0: the same), and
  # refuses any other `version`: so `version` carries the oldest one a node speaks, which a
  # node of that version accepts.
  version @0 :UInt32;
  role @1 :Role;
  nodeId @2 :Text;          # core/names.h: 1-128 characters of [A-Za-z0-9._:@+-]
  nonce @3 :Data;           # unused since protocol 2 (TLS carries the freshness)
  certificate @4 :Certificate;  # (protocol 3) the sender's, issued by a deployment authority
  binding @5 :Data;         # Ed25519 by the certificate's key over the TLS channel (net/identity.h)
  # A daemon that has no certificate yet and comes to enroll (net/enrollment_token.h): its new
  # public key, which `binding` is made with; only an enroller super-node accepts it, for an
  # Enroll alone.
  enrollKey @6 :Data;
  maxVersion @7 :UInt32;    # (protocol 4) the newest version the sender speaks; 0: `version`
}
# Binds a node id and role to a public key, signed by an authority key or, for a daemon, by an
# enroller super-node whose own certificate comes along as `issuer` (net/certificate.h).
struct Certificate {
  id @0 :Text;
  role @1 :Role;
  publicKey @2 :Data;       # Ed25519, 32 bytes
  expires @3 :Int64;        # Unix time, seconds
  signature @4 :Data;       # by the authority or the issuer, over the fields (net/certificate.h)
  enroller @5 :Bool;        # a super-node that may certify enrolling daemons
  issuer @6 :Certificate;   # the enroller's certificate, when an enroller signed this one
}
# Keys an authority no longer believes (net/revocation.h); super-nodes pass the newest on.
struct RevocationList {
  authority @0 :Data;
  serial @1 :UInt64;
  keys @2 :List(Data);
  signature @3 :Data;
}
# An enrolling daemon to an enroller super-node: the operator's one-time token. The answer
# certifies the key of the daemon's Hello under the id the token names.
struct Enroll { token @0 :Text; }
struct Enrolled { certificate @0 :Certificate; error @1 :Text; }
struct Auth {
  mac @0 :Data;             # unused since protocol 2 (was the HMAC proof of protocol 1)
}
struct Refuse {
  reason @0 :Text;          # sent before closing a connection on purpose
}

# --- daemon <-> super-node ---
struct Register { daemon @0 :DaemonInfo; }
struct RegisterAck { supernodeId @0 :Text; }
struct Heartbeat {
  daemonId @0 :Text;
  busy @1 :Bool;
  # Answer at least once in this long (0: every heartbeat, as before it was asked): the daemon
  # needs an answer only to tell a silent super-node (supernode_timeout_ms). An unknown daemon
  # is answered at once.
  ackWithinMs @2 :UInt32;
}
struct HeartbeatAck { known @0 :Bool; }   # false: the super-node forgot us, register again
# A daemon that is stopping: its super-node forgets it at once (rather than after
# daemon_timeout_ms of silence) and closes the connection.
struct Deregister { daemonId @0 :Text; }

# --- spawner <-> super-node, super-node <-> super-node ---
struct RequestDaemons {
  requestId @0 :UInt64;
  job @1 :Text;
  count @2 :UInt32;
  spares @3 :UInt32;        # extra daemons reserved for replacements
  forwarded @4 :Bool;       # set when a super-node asks a peer on a spawner's behalf
  holdMs @5 :UInt32;        # not met at once: answer as soon as it is, or after this long
}
struct GrantDaemons {
  requestId @0 :UInt64;
  daemons @1 :List(DaemonInfo);   # empty with `error` set when the request cannot be met
  error @2 :Text;
}
struct ReleaseDaemons {
  job @0 :Text;
  daemonIds @1 :List(Text);
  forwarded @2 :Bool;
}
struct RegistryDigest {
  supernodeId @0 :Text;
  daemons @1 :List(DaemonInfo);   # the daemons registered with that super-node
  jobs @2 :List(JobStatus);       # the jobs registered with it (net/job_status.h)
}

# Protocol 7 (net/hello.h): what changed in a super-node's registry and jobs since its last
# RegistryDelta on this connection (supernode/registry_delta.h); the connection's first one is
# `full`. One goes every digest period, empty when nothing changed: it says the sender still
# vouches for every daemon it sent.
struct RegistryDelta {
  supernodeId @0 :Text;
  full @1 :Bool;                  # replaces all the receiver holds of the sender
  daemons @2 :List(DaemonInfo);   # registered, or changed, since the last delta
  removed @3 :List(Text);         # ids no longer registered there
  jobs @4 :List(JobStatus);       # registered, or changed
  endedJobs @5 :List(Text);       # ids of jobs no longer registered there
  lateMs @6 :Int64;               # heartbeat ages past this are exact; others go unsent
}

# --- what a deployment is doing: `aiac-spawner status` and `cancel` (docs/operations.md) ---
# One task of a running job, as its spawner last heard of it.
struct TaskStatus {
  task @0 :UInt32;
  daemonId @1 :Text;        # its daemon (the one lost, while it waits for another)
  iteration @2 :UInt64;
  change @3 :Float64;       # its latest local change
  incarnation @4 :UInt64;
  checkpoints @5 :UInt64;   # copies its backups acknowledged
  reportAgeMs @6 :Int64;    # since its latest report (-1: none yet in this incarnation)
}
# A running job, as its spawner describes it. The spawner's first JobStatus registers the job
# with its super-node; the next ones (a second apart at least) update it; JobEnded, or the
# spawner's connection closing, forgets it.
struct JobStatus {
  id @0 :Text;
  app @1 :Text;
  spawnerId @2 :Text;       # filled in by the super-node: the id the spawner proved
  spawnerAddress @3 :Text;  # filled in by the super-node: where the spawner connects from
  tasks @4 :UInt32;
  daemons @5 :UInt32;       # granted, spares included
  startedUnix @6 :Int64;    # when the spawner started the job, Unix seconds
  phase @7 :Text;           # acquiring | assigning | running | checking | gathering
  minIteration @8 :UInt64;
  maxIteration @9 :UInt64;
  maxChange @10 :Float64;   # the largest of the tasks' latest local changes
  failures @11 :UInt32;
  replacements @12 :UInt32;
  moves @13 :UInt64;        # item moves by live balancing so far
  etaSeconds @14 :Float64;  # the forecast's time to convergence; < 0: none yet
  taskList @15 :List(TaskStatus);
  supernodeId @16 :Text;    # filled in by the super-node the job is registered with
}
struct JobEnded { job @0 :Text; }
# Any process holding a spawner's credentials asks a super-node what it knows.
struct StatusQuery { requestId @0 :UInt64; }
struct StatusReport {
  requestId @0 :UInt64;
  supernodeId @1 :Text;
  daemons @2 :List(DaemonInfo);   # its own, then its peers' (from their latest digests)
  lost @3 :List(DaemonInfo);      # its daemons that stopped heartbeating lately (kLostMemory)
  jobs @4 :List(JobStatus);       # its own, then its peers'
  peers @5 :List(Text);           # the peer super-nodes linked now
}
# Ends a running job as Ctrl-C at its spawner would. From a spawner's credentials to a
# super-node; from the super-node to the job's spawner (or, `forwarded`, to the peer super-node
# the job is registered with).
struct CancelJob {
  requestId @0 :UInt64;
  job @1 :Text;
  requester @2 :Text;       # filled in by the first super-node: who asked, and from where
  forwarded @3 :Bool;
}
struct CancelAnswer {
  requestId @0 :UInt64;
  error @1 :Text;           # empty: the job's spawner was told
  supernodeId @2 :Text;     # the super-node the job is registered with
}

# --- spawner <-> daemon ---
struct Param { key @0 :Text; value @1 :Text; }
struct Neighbour {
  task @0 :UInt32;
  address @1 :Text;
  daemonId @2 :Text;        # the daemon running `task`: only it may send that task's values
}
struct AssignTask {
  job @0 :Text;
  task @1 :UInt32;
  taskCount @2 :UInt32;
  app @3 :Text;
  pluginHash @4 :Data;      # SHA-256 of the app plugin; empty for built-in apps
  params @5 :List(Param);
  neighbours @6 :List(Neighbour);
  backups @7 :List(Text);   # addresses of the daemons keeping this task's checkpoints
  restore @8 :Bool;         # start from the newest checkpoint on the backups
  sync @9 :Bool;            # wait for every neighbour's previous iteration
  data @10 :Data;           # the task's data slice, app-defined (empty: built from params)
  pluginName @11 :Text;     # file name the plugin is known by (for logs)
  pluginSignature @12 :Data; # Ed25519 over "aiac-plugin-v1" | pluginHash (aiac/code_signing.h)
  senders @13 :List(Neighbour); # the tasks whose values this task receives, and their daemons
  backupDaemons @14 :List(Neighbour); # where this task's checkpoints go (task: the one that daemon runs)
  hosted @15 :List(Neighbour); # the tasks whose checkpoints this daemon keeps, and their daemons
  checkpointEvery @16 :UInt64;  # iterations between checkpoints (0: not by iterations)
  checkpointMs @17 :UInt64;     # milliseconds between checkpoints (0: not by time)
  incarnation @18 :UInt64;      # 1 for a task's first daemon, one more for each replacement
  tighten @19 :Float64;         # the local tests' tightening so far (Tighten factors multiplied; 0 or 1: none)
  dataSize @20 :UInt64;         # > 0: `data` is empty; the task's data came just before, in TaskData chunks
  dataSha256 @21 :Data;         # with dataSize: SHA-256 of the whole data
  # DistPM's group (distpm-workload-migration.md section 4.1): the tasks whose daemons
  # share this task's cluster, the first one's daemon their coordinator. A member sends its
  # TaskProgress to the coordinator, which passes its group's on to the spawner in one
  # GroupReports per progress period. Empty: reports go straight to the spawner.
  group @22 :List(Neighbour);
  # The spawner's grant of this (task, incarnation) to this daemon (checkpoint/proof.h): what
  # its checkpoints are signed under, and what lets it read them back from the backups.
  capability @23 :TaskCapability;
  # The public key (32 raw bytes) pluginSignature claims to be by, from the publisher's
  # signature file (runtime/plugin_signature.h): named in refusals, checked against revoked_keys.
  pluginSigner @24 :Data;
  # The job's limits on the child process the task runs in (daemon/app_child.h): address space
  # in MiB and CPU seconds (0: none), and how long one call into the app may take before it
  # counts as hung (milliseconds; 0: no limit).
  memoryMb @25 :UInt64;
  cpuSeconds @26 :UInt64;
  appStallMs @27 :UInt64;
  # Synchronous runs: the most bytes of the values this task sent that it keeps for its receivers
  # (a replaced receiver gets them again, daemon/value_log.h), in MiB; 0: none kept, and a lost
  # daemon ends the run.
  valueLogMb @28 :UInt64;
  # Jobs outlive their spawner (docs/fault-tolerance.md): when the link to the job's spawner
  # drops, the task keeps iterating and checkpointing this many seconds, waiting for a resumed
  # spawner's AdoptTask, then ends (0: ends at once, as before protocol 6).
  orphanSeconds @29 :UInt32;
  # The spawner's incarnation that sends this (1 for `run`, one more for each `resume`): the
  # daemon takes commands only from the newest one it has seen for the job (fencing).
  spawnerEpoch @30 :UInt64;
  # Protocol 8: the spawner sends a SpawnerAlive every second; when nothing comes from it this
  # many seconds (suspended, its host asleep or cut off with no TCP error yet), the daemon counts
  # it as lost while the link stays open: the task runs on for orphanSeconds, goes on under the
  # spawner if it speaks again meanwhile, and ends then otherwise (0: never counted as lost).
  spawnerTimeoutS @31 :UInt32;
}
# Signed by the job's spawner: `daemonId`, whose certified key is `daemonKey`, runs incarnation
# `incarnation` of task `task` of `job`.
struct TaskCapability {
  job @0 :Text;
  task @1 :UInt32;
  incarnation @2 :UInt64;
  daemonId @3 :Text;
  daemonKey @4 :Data;
  signature @5 :Data;
}
# What makes a checkpoint believable: the capability of the daemon that made it, and that
# daemon's signature over the checkpoint's job, task, incarnation, iteration and SHA-256.
struct CheckpointProof {
  capability @0 :TaskCapability;
  signature @1 :Data;
}
# A chunk of a task's data (spawner -> daemon), for data too large for one frame: chunks of one
# task go in order (offset 0 first), each well under the frame limit, then the AssignTask.
struct TaskData {
  job @0 :Text;
  task @1 :UInt32;
  offset @2 :UInt64;
  total @3 :UInt64;             # the whole data's size, so the daemon can check it fits first
  bytes @4 :Data;
}
struct TaskReady {
  job @0 :Text;
  task @1 :UInt32;
  error @2 :Text;
  needPlugin @3 :Bool;      # the daemon has no plugin with that hash: send PluginData
  restoredIteration @4 :UInt64; # restore: the iteration of the checkpoint used (0: initial state)
  restoredMoves @5 :UInt64;     # restore: the item moves the checkpoint had applied (ItemsMoved.moves)
  outbox @6 :List(ExportedItems); # restore: exports the checkpoint holds unconfirmed (MoveItems confirm)
  notes @7 :Text;               # app::Task::Notes(): what the user should know of the set-up
  crash @8 :AppCrash;           # with error: the app's process died or hung while it set up
  adopted @9 :Bool;             # the answer to an AdoptTask: the task runs on, now this spawner's
  started @10 :Bool;            # adopted: the task was started (StartTask) and iterates
  # To a spawner whose task a newer spawner incarnation adopted (AdoptTask): this daemon no
  # longer listens to it, and the job is not its to end (no halt, no release).
  superseded @11 :Bool;
}
# Items a task exported, kept with its checkpoints until the spawner confirms it has them.
struct ExportedItems { move @0 :UInt64; moves @1 :UInt64; items @2 :Data; count @3 :UInt64; }
# Fault injection (`run --kill-every` with daemons started by hand): the job's spawner asks the
# daemon to exit at once, as if killed.
struct Exit { job @0 :Text; }
# Synchronous runs, the spawner to the daemons of the tasks that send to `task`: every backup of
# `task` holds a checkpoint of `iteration`, so the values sent to it before that iteration will
# never be asked for again (daemon/value_log.h).
# A resumed spawner (`aiac-spawner resume`) to the daemon of each task it finds in its state:
# incarnation `incarnation` of `task` is this spawner's to command from now on, in spawner
# incarnation `spawnerEpoch`, which must be newer than the one the daemon takes commands from.
# The daemon answers with a TaskReady (adopted, or an error: no such task runs here, a newer
# spawner owns it); the old spawner's connection, if any, is no longer listened to.
struct AdoptTask { job @0 :Text; task @1 :UInt32; incarnation @2 :UInt64; spawnerEpoch @3 :UInt64; }
# Protocol 8: the job's spawner to each of its tasks' daemons, every second, so that a spawner
# that stopped running is told apart from one with nothing to say (AssignTask.spawnerTimeoutS).
struct SpawnerAlive { job @0 :Text; }
struct TrimValues { job @0 :Text; task @1 :UInt32; iteration @2 :UInt64; }
# The spawner to every daemon of a job when a task moved to another daemon (a replacement):
# values for `task` now go to `address`, only `daemonId` may send its values or write its
# checkpoints, and this daemon's role as a backup of the dead one passes to it.
struct NeighbourMoved {
  job @0 :Text;
  task @1 :UInt32;
  address @2 :Text;
  daemonId @3 :Text;
  incarnation @4 :UInt64;
  previousDaemonId @5 :Text;
}
# The bytes of an app plugin, sent only to daemons that asked for it (TaskReady.needPlugin).
# A plugin larger than a frame comes in chunks: `bytes` from `offset`, of `total` bytes in all
# (total = 0: the whole plugin in this one frame).
struct PluginData { sha256 @0 :Data; name @1 :Text; bytes @2 :Data; offset @3 :UInt64; total @4 :UInt64; }
# Global convergence detection: a confirmation round once every task reported convergence.
struct ConvergenceQuery { job @0 :Text; round @1 :UInt64; }
# incarnation (in TaskProgress, LocalConvergence, ConvergenceAnswer, Result): of the task on the
# sending daemon (AssignTask.incarnation); the spawner drops what an older incarnation sends.
struct ConvergenceAnswer { job @0 :Text; task @1 :UInt32; round @2 :UInt64; converged @3 :Bool; incarnation @4 :UInt64; }
struct StartTask { job @0 :Text; }
struct TaskProgress {
  job @0 :Text;
  task @1 :UInt32;
  iteration @2 :UInt64;
  localChange @3 :Float64;
  converged @4 :Bool;
  checkpoints @5 :UInt64;       # checkpoint copies its backups acknowledged so far
  checkpointBytes @6 :UInt64;   # their state bytes
  incarnation @7 :UInt64;
  # Live balancing (docs/balancing.md): app::Task::WorkDone / RemainingWork / ItemCount (-1: no items),
  # the item moves applied so far, and the host's run-queue length (mean N, sigma_n).
  workDone @8 :Float64;
  remainingWork @9 :Float64;
  items @10 :Int64;
  moves @11 :UInt64;
  runQueueMean @12 :Float64;
  runQueueStd @13 :Float64;
  busySeconds @14 :Float64;     # runtime::TaskMeasures::active_s: time it had something to do
  links @15 :List(LinkFigures); # this daemon's links to other daemons of the job, as measured
  profile @16 :TaskProfile;     # runtime::TaskProfile, since the task started on this daemon
  # Synchronous runs (daemon/value_log.h): the newest iteration of this task's checkpoints that
  # every backup acknowledged, and the oldest iteration its value log still holds for every
  # receiver beyond what TrimValues allowed to drop (0: it dropped nothing for want of room, and
  # the task was not restored; a restored task logs from its checkpoint's last but one iteration).
  safeCheckpoint @17 :UInt64;
  valueLogFrom @18 :UInt64;
}
# Where a task's time went and what it exchanged (runtime::TaskProfile; `run --log-view`).
struct TaskProfile {
  computeSeconds @0 :Float64;
  waitSeconds @1 :Float64;
  checkpointSeconds @2 :Float64;
  moveSeconds @3 :Float64;
  messagesSent @4 :UInt64;
  bytesSent @5 :UInt64;
  messagesReceived @6 :UInt64;
  bytesReceived @7 :UInt64;
}
# A group coordinator's reports (AssignTask.group): its own and its members' newest since the
# last one, each as its task's daemon sent it.
struct GroupReports { job @0 :Text; reports @1 :List(TaskProgress); }
# Live balancing (docs/balancing.md): the spawner moves work items between running tasks, one step at a
# time, between two iterations of the task. export: items worth `work` leave the task (the reply
# carries them); import: `items` join it; drop: a task restored from before an export forgets
# `items` again; confirm: the spawner has move `move`'s exported items, the task may forget them.
enum MoveKind { export @0; import @1; drop @2; confirm @3; }
struct MoveItems {
  job @0 :Text;
  task @1 :UInt32;
  move @2 :UInt64;
  kind @3 :MoveKind;
  work @4 :Float64;
  items @5 :Data;
  to @6 :UInt32;            # export: the task that will take the items
  # export: also send the items, daemon to daemon, along these daemons (RelayItems); the last
  # one runs `to`. Empty: the items travel only in the reply.
  route @7 :List(Neighbour);
  # import with no `items`: take the items of move `move` that come by RelayItems, once they
  # hash to this SHA-256 (the spawner has them from the export's reply).
  sha256 @8 :Data;
}
# A daemon's measure of its link to another daemon (monitor/link_monitor.h): DistPM's alpha and
# beta from the round trips of the frames it sent there.
struct LinkFigures {
  daemonId @0 :Text;
  alpha @1 :Float64;            # seconds
  secondsPerByte @2 :Float64;   # 0: no large frame measured yet
  samples @3 :UInt32;
}
# On a monitored connection between daemons (values, items passed on), the reader acknowledges
# each frame it read at once, in order, so the writer times the link (LinkMonitor); a LinkProbe
# is a frame sent only to be timed, once a second.
struct LinkAck { frames @0 :UInt32; }
struct LinkProbe { }
# Items of move `move` on their way from the exporting task's daemon to the daemon of `toTask`
# (docs/balancing.md, DistPM's migration gateways): each daemon in `route` passes them to the next; the
# receiver is route[0], the last one runs `toTask` and imports them when the spawner's MoveItems
# names their SHA-256.
struct RelayItems {
  job @0 :Text;
  move @1 :UInt64;
  toTask @2 :UInt32;
  route @3 :List(Neighbour);
  items @4 :Data;
}
struct ItemsMoved {
  job @0 :Text;
  task @1 :UInt32;
  move @2 :UInt64;
  kind @3 :MoveKind;
  incarnation @4 :UInt64;
  error @5 :Text;           # nothing changed
  items @6 :Data;           # export: the items
  count @7 :UInt64;         # items exported, imported or dropped
  itemsAfter @8 :Int64;     # the task's items now
  moves @9 :UInt64;         # the task's move sequence number after this step
}
struct LocalConvergence { job @0 :Text; task @1 :UInt32; converged @2 :Bool; iteration @3 :UInt64; incarnation @4 :UInt64; }
# `dropped`: the spawner gave the task to another daemon (this one was silent, and is fenced
# off): it ends at once, sends nothing, and does not wait for a resumed spawner.
struct Halt { job @0 :Text; dropped @1 :Bool; }
# The spawner checks a globally converged result before it says so: each task sends its current
# result slice (between two iterations, without stopping) ...
struct Snapshot { job @0 :Text; round @1 :UInt64; }
struct SnapshotData {
  job @0 :Text;
  task @1 :UInt32;
  round @2 :UInt64;
  iteration @3 :UInt64;
  incarnation @4 :UInt64;
  data @5 :Data;            # app::Task::ResultSlice()
}
# ... and when the app finds the gathered result short of its acceptance test, every task
# divides its local convergence threshold by `factor` (> 1) and goes on iterating.
struct Tighten { job @0 :Text; factor @1 :Float64; }
struct Result {
  job @0 :Text;
  task @1 :UInt32;
  iterations @2 :UInt64;
  data @3 :Data;            # the task's result slice, app-defined encoding
  error @4 :Text;
  checkpoints @5 :UInt64;   # as in TaskProgress, final
  checkpointBytes @6 :UInt64;
  incarnation @7 :UInt64;
  diverged @8 :Bool;        # with error: the task's values diverged (kDiverged), not another failure
  profile @9 :TaskProfile;  # as in TaskProgress, final
  # With error: the app's process died or hung (its daemon is fine and stays up); what killed
  # it. The spawner restarts the task elsewhere once, and ends the job at the second crash.
  crash @10 :AppCrash;
}
struct AppCrash {
  crashed @0 :Bool;
  cause @1 :Text;           # "SIGSEGV", "SIGABRT", "exit code 3", "hung: no answer in 30 s", ...
  iteration @2 :UInt64;     # the task's last iteration completed
  stderrTail @3 :Text;      # the last lines (at most 20) of the task's standard error
}

# --- daemon <-> daemon ---
struct DependencyData {
  job @0 :Text;
  fromTask @1 :UInt32;
  toTask @2 :UInt32;
  iteration @3 :UInt64;
  data @4 :Data;
  converged @5 :Bool;       # the sender was locally converged after this iteration
  seen @6 :UInt64;          # the newest iteration of toTask's values the sender had absorbed
  incarnation @7 :UInt64;   # of fromTask: values are ordered by (incarnation, iteration)
  seenIncarnation @8 :UInt64; # the incarnation of toTask that `seen` counts in
}
struct CheckpointPut {
  job @0 :Text;
  task @1 :UInt32;
  iteration @2 :UInt64;
  state @3 :Data;
  incarnation @4 :UInt64;
  checksum @5 :UInt32;      # CRC32C of state, computed where the task ran
  proof @6 :CheckpointProof;
}
# A backup's answer to CheckpointPut: stored, or why not (`stored` false and `error` empty:
# older than the checkpoints it keeps).
struct CheckpointAck {
  job @0 :Text;
  task @1 :UInt32;
  incarnation @2 :UInt64;
  iteration @3 :UInt64;
  stored @4 :Bool;
  error @5 :Text;
}
# `capability`: the asker's, for the task's incarnation it runs now.
struct CheckpointGet { job @0 :Text; task @1 :UInt32; capability @2 :TaskCapability; }
struct CheckpointData {
  job @0 :Text;
  task @1 :UInt32;
  iteration @2 :UInt64;
  state @3 :Data;
  found @4 :Bool;
  incarnation @5 :UInt64;
  checksum @6 :UInt32;
  error @7 :Text;           # not found because the asker may not read it (yet)
  proof @8 :CheckpointProof;
}
struct Migrate {
  job @0 :Text;
  fromTask @1 :UInt32;
  toTask @2 :UInt32;
  firstItem @3 :UInt64;
  items @4 :Data;
}

# A message whose frame exceeds the frame limit travels as the bytes of that frame (segment table
# and segments) in parts, in order, each a frame of its own well under the limit, all sent before
# any other message on the connection. The receiver checks the size against its memory at the
# first part and the SHA-256 at the last (lib/net/message_parts.h).
struct Part {
  offset @0 :UInt64;
  total @1 :UInt64;             # the whole frame's size in bytes
  bytes @2 :Data;
  sha256 @3 :Data;              # on the last part only: SHA-256 of the whole frame
}

struct Envelope {
  union {
    hello @0 :Hello;
    auth @1 :Auth;
    refuse @2 :Refuse;
    register @3 :Register;
    registerAck @4 :RegisterAck;
    heartbeat @5 :Heartbeat;
    heartbeatAck @6 :HeartbeatAck;
    requestDaemons @7 :RequestDaemons;
    grantDaemons @8 :GrantDaemons;
    releaseDaemons @9 :ReleaseDaemons;
    registryDigest @10 :RegistryDigest;
    assignTask @11 :AssignTask;
    taskReady @12 :TaskReady;
    startTask @13 :StartTask;
    taskProgress @14 :TaskProgress;
    localConvergence @15 :LocalConvergence;
    halt @16 :Halt;
    result @17 :Result;
    dependencyData @18 :DependencyData;
    checkpointPut @19 :CheckpointPut;
    checkpointGet @20 :CheckpointGet;
    checkpointData @21 :CheckpointData;
    migrate @22 :Migrate;
    pluginData @23 :PluginData;
    convergenceQuery @24 :ConvergenceQuery;
    convergenceAnswer @25 :ConvergenceAnswer;
    checkpointAck @26 :CheckpointAck;
    neighbourMoved @27 :NeighbourMoved;
    exit @28 :Exit;
    snapshot @29 :Snapshot;
    snapshotData @30 :SnapshotData;
    tighten @31 :Tighten;
    taskData @32 :TaskData;
    part @33 :Part;
    moveItems @34 :MoveItems;
    itemsMoved @35 :ItemsMoved;
    relayItems @36 :RelayItems;
    linkAck @37 :LinkAck;
    linkProbe @38 :LinkProbe;
    groupReports @39 :GroupReports;
    revocations @40 :RevocationList;
    enroll @41 :Enroll;
    enrolled @42 :Enrolled;
    deregister @43 :Deregister;
    jobStatus @44 :JobStatus;
    jobEnded @45 :JobEnded;
    statusQuery @46 :StatusQuery;
    statusReport @47 :StatusReport;
    cancelJob @48 :CancelJob;
    cancelAnswer @49 :CancelAnswer;
    trimValues @50 :TrimValues;
    adoptTask @51 :AdoptTask;
    registryDelta @52 :RegistryDelta;
    spawnerAlive @53 :SpawnerAlive;
  }
}
