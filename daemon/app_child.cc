#include "daemon/app_child.h"

#include <capnp/message.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string_view>
#include <thread>

#include "core/logging.h"
#include "core/printable.h"
#include "daemon/app_child_wire.h"
#include "net/capnp_bytes.h"
#include "proto/app_child.capnp.h"

extern char** environ;

namespace aiac::daemon {

namespace {

std::string SignalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

}  // namespace

std::optional<AppCrash> AppChildState::crash() const {
  std::lock_guard lock(mu_);
  return crash_;
}

Status AppChildState::health() const {
  std::lock_guard lock(mu_);
  if (!crash_) return error_;
  return Status(StatusCode::kAborted, "app crashed: " + crash_->cause);
}

std::string TailOfFile(const std::string& path, size_t lines) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  const std::streamoff from = std::max<std::streamoff>(0, size - 64 * 1024);
  in.seekg(from);
  std::string text(static_cast<size_t>(size - from), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  std::vector<std::string> all;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start)
      all.push_back(Printable(std::string_view(text).substr(start, end - start), 300, false));
    start = end + 1;
  }
  std::string out;
  for (size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i) {
    if (!out.empty()) out += '\n';
    out += all[i];
  }
  return out;
}

ChildTask::ChildTask(const AppChildSpec& spec, pid_t pid, int fd)
    : spec_(spec), pid_(pid), fd_(fd) {}

ChildTask::~ChildTask() {
  if (fd_ >= 0) ::close(fd_);
  Kill();
}

void ChildTask::Kill() const {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

Result<std::unique_ptr<ChildTask>> ChildTask::Start(const AppChildSpec& spec,
                                                    const std::string& app_name,
                                                    const app::JobParams& params, uint32_t task,
                                                    std::string_view slice,
                                                    std::optional<AppCrash>* crash) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    return IoError(std::string("cannot make a socketpair for the app's process: ") +
                   std::strerror(errno));
  }
  constexpr int kChildFd = 3;
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&files, 1, spec.stderr_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0640);
  posix_spawn_file_actions_adddup2(&files, 1, 2);
  posix_spawn_file_actions_adddup2(&files, sv[1], kChildFd);  // clears close-on-exec
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Its own process group (a terminal's Ctrl-C is the daemon's to handle), no signal blocked
  // or ignored as the daemon's threads may have them.
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  std::vector<std::string> args = {spec.executable,
                                   "--fd",
                                   std::to_string(kChildFd),
                                   "--parent",
                                   std::to_string(::getpid()),
                                   "--memory-mb",
                                   std::to_string(spec.memory_mb),
                                   "--cpu-seconds",
                                   std::to_string(spec.cpu_seconds)};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // The daemon's environment, with OpenMP's thread limit when the spec sets one.
  constexpr std::string_view kThreadLimit = "OMP_THREAD_LIMIT=";
  std::string limit = std::string(kThreadLimit) + std::to_string(spec.threads);
  std::vector<char*> envp;
  for (char** e = environ; *e; ++e) {
    if (spec.threads <= 0 || !std::string_view(*e).starts_with(kThreadLimit)) envp.push_back(*e);
  }
  if (spec.threads > 0) envp.push_back(limit.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  const int spawned =
      ::posix_spawn(&pid, spec.executable.c_str(), &files, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&files);
  posix_spawnattr_destroy(&attr);
  ::close(sv[1]);
  if (spawned != 0) {
    ::close(sv[0]);
    return IoError("cannot start " + spec.executable + ": " + std::strerror(spawned));
  }
  std::unique_ptr<ChildTask> child(new ChildTask(spec, pid, sv[0]));
  auto made = child->Call(Op::kMake, slice, 0, 0, &params, &app_name, task);
  if (!made.ok()) {
    if (crash) *crash = child->state()->crash();
    return made.status();
  }
  child->dependencies_ = std::move(made->dependencies);
  return child;
}

Status ChildTask::Died(const std::string& hung) const {
  if (!hung.empty()) ::kill(pid_, SIGKILL);
  // It closed its end: it is exiting. One that closed it and goes on is killed after 5 s.
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  pid_t reaped;
  while ((reaped = ::waitpid(pid_, &status, WNOHANG)) == 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (reaped == 0) {
    ::kill(pid_, SIGKILL);
    while ((reaped = ::waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
    }
  }
  AppCrash crash;
  if (!hung.empty()) {
    crash.cause = hung;
  } else if (reaped > 0 && WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    crash.cause = SignalName(sig);
    if (spec_.cpu_seconds > 0 && (sig == SIGXCPU || sig == SIGKILL)) {
      crash.cause += " (cpu_seconds = " + std::to_string(spec_.cpu_seconds) + ")";
    }
  } else if (reaped > 0 && WIFEXITED(status)) {
    crash.cause = "exit code " + std::to_string(WEXITSTATUS(status));
  } else {
    crash.cause = "lost";
  }
  crash.stderr_tail = TailOfFile(spec_.stderr_path);
  pid_ = -1;  // reaped; the socket stays open (another thread may use it) until destruction
  {
    std::lock_guard lock(state_->mu_);
    state_->crash_ = crash;
  }
  return state_->health();
}

Result<ChildTask::Answer> ChildTask::Call(Op op, std::string_view bytes, double number, uint32_t to,
                                          const app::JobParams* params, const std::string* app_name,
                                          uint32_t task) const {
  AIAC_RETURN_IF_ERROR(state_->health());
  capnp::MallocMessageBuilder m;
  auto call = m.initRoot<proto::ChildCall>();
  auto absorb = call.initAbsorb(static_cast<unsigned>(absorb_.size()));
  for (unsigned i = 0; i < absorb.size(); ++i) {
    absorb[i].setFrom(absorb_[i].first);
    absorb[i].adoptBytes(BytesFor(m, absorb_[i].second));
  }
  if (inputs_final_) {
    call.setSetFinal(true);
    call.setInputsFinal(*inputs_final_);
  }
  switch (op) {
    case Op::kMake: {
      auto make = call.initMake();
      make.setPlugin(spec_.plugin);
      make.setApp(*app_name);
      auto list = make.initParams(static_cast<unsigned>(params->values.size()));
      unsigned i = 0;
      for (const auto& [key, value] : params->values) {
        list[i].setKey(key);
        list[i].setValue(value);
        ++i;
      }
      make.setTasks(params->tasks);
      make.setBaseDir(params->base_dir);
      make.setTask(task);
      make.adoptSlice(BytesFor(m, bytes));
      break;
    }
    case Op::kIterate:
      call.setIterate();
      break;
    case Op::kSave:
      call.setSaveState();
      break;
    case Op::kRestore:
      call.adoptRestoreState(BytesFor(m, bytes));
      break;
    case Op::kSlice:
      call.setResultSlice();
      break;
    case Op::kTighten:
      call.setTighten(number);
      break;
    case Op::kExport: {
      auto e = call.initExportItems();
      e.setWork(number);
      e.setTo(to);
      break;
    }
    case Op::kImport:
      call.adoptImportItems(BytesFor(m, bytes));
      break;
    case Op::kDrop:
      call.adoptDropItems(BytesFor(m, bytes));
      break;
  }
  const Status sent = SendChildMessage(fd_, m);
  absorb_.clear();
  inputs_final_.reset();
  if (!sent.ok()) return Died("");
  for (;;) {
    auto in = ReceiveChildMessage(
        fd_, spec_.stall.count() > 0 ? std::optional(spec_.stall) : std::nullopt);
    if (!in.ok()) {
      if (in.status().code() != StatusCode::kTimeout) return Died("");
      return Died(fmt::format("hung (no answer in {:g} s)",
                              std::chrono::duration<double>(spec_.stall).count()));
    }
    auto message = (*in)->root<proto::ChildMessage>();
    if (message.isLog()) {
      Forward(message.getLog());
      continue;
    }
    auto reply = message.getReply();
    if (reply.hasFigures()) {
      auto f = reply.getFigures();
      figures_ = {f.getLocalChange(), f.getLocallyConverged(), f.getWorkDone(),
                  f.getRemainingWork(), f.getItemCount()};
    }
    if (op == Op::kMake || op == Op::kRestore || op == Op::kTighten) {
      notes_ = reply.getNotes().cStr();
    }
    if (reply.getError().size() > 0) return ChildError(reply.getError(), reply.getErrorCode());
    Answer answer;
    switch (reply.which()) {
      case proto::ChildReply::MADE:
        for (uint32_t d : reply.getMade().getDependencies()) answer.dependencies.push_back(d);
        break;
      case proto::ChildReply::ITERATED:
        answer.iterated = reply.getIterated();
        break;
      case proto::ChildReply::BYTES:
        answer.bytes = net::AsString(reply.getBytes());
        break;
      default:
        break;
    }
    for (auto o : reply.getOutgoing())
      answer.outgoing.push_back({o.getTo(), net::AsString(o.getBytes())});
    return answer;
  }
}

void ChildTask::Forward(proto::ChildLog::Reader log) const {
  if (spec_.log) {
    spec_.log->Write(static_cast<app::LogLevel>(std::min<uint8_t>(log.getLevel(), 3)),
                     log.getLine().cStr());
  }
}

Status ChildTask::Absorb(uint32_t from, std::string_view bytes) {
  AIAC_RETURN_IF_ERROR(state_->health());
  absorb_.emplace_back(from, std::string(bytes));
  return Status::Ok();
}

Result<bool> ChildTask::Iterate() {
  AIAC_ASSIGN_OR_RETURN(Answer a, Call(Op::kIterate));
  outgoing_ = std::move(a.outgoing);
  return a.iterated;
}

std::vector<app::Outgoing> ChildTask::TakeOutgoing() { return std::move(outgoing_); }

void ChildTask::Keep(const Status& error) const {
  std::lock_guard lock(state_->mu_);
  if (state_->error_.ok()) state_->error_ = error;
}

std::string ChildTask::SaveState() const {
  auto a = Call(Op::kSave);
  if (!a.ok()) Keep(a.status());
  return a.ok() ? std::move(a->bytes) : std::string();
}

Status ChildTask::RestoreState(std::string_view state) {
  return Call(Op::kRestore, state).status();
}

std::string ChildTask::ResultSlice() const {
  auto a = Call(Op::kSlice);
  if (!a.ok()) Keep(a.status());
  return a.ok() ? std::move(a->bytes) : std::string();
}

Status ChildTask::Tighten(double factor) { return Call(Op::kTighten, {}, factor).status(); }

Result<std::string> ChildTask::ExportItems(double work, uint32_t to) {
  AIAC_ASSIGN_OR_RETURN(Answer a, Call(Op::kExport, {}, work, to));
  return std::move(a.bytes);
}

Status ChildTask::ImportItems(std::string_view items) { return Call(Op::kImport, items).status(); }

Status ChildTask::DropItems(std::string_view items) { return Call(Op::kDrop, items).status(); }

}  // namespace aiac::daemon
