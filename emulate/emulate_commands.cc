#include "emulate/emulate_commands.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <boost/asio.hpp>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "core/read_file.h"
#include "emulate/background_load.h"
#include "emulate/host_setup.h"
#include "emulate/platform_state.h"
#include "emulate/tun_switch.h"

namespace aiac::emulate {

namespace fs = std::filesystem;

namespace {

int Fail(const Status& s, int code = 1) {
  std::fprintf(stderr, "aiac-emulate: %s\n", s.message().c_str());
  return code;
}

std::string SelfExe() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? "aiac-emulate" : p.string();
}

// The pids of the processes whose command line is exactly `args` after the program.
std::vector<pid_t> FindProcesses(const std::vector<std::string>& args) {
  std::vector<pid_t> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "cmdline", std::ios::binary);
    std::vector<std::string> words;
    for (std::string w; std::getline(in, w, '\0');) words.push_back(w);
    if (words.size() == args.size() + 1 && fs::path(words[0]).filename() == "aiac-emulate" &&
        std::equal(args.begin(), args.end(), words.begin() + 1)) {
      found.push_back(std::stoi(name));
    }
  }
  return found;
}

std::vector<pid_t> SwitchesOf(const std::string& dir) { return FindProcesses({"switch", dir}); }

// Starts `args` of this program in a session of its own, output appended to `log`, with
// `pass_fd` (if not -1) as its descriptor 3 and, before it runs, in the cgroup `cgroup` (if set).
Result<pid_t> SpawnSelf(const std::vector<std::string>& args, const std::string& log,
                        int pass_fd = -1, const std::string& cgroup = "") {
  const std::string exe = SelfExe();
  const pid_t pid = fork();
  if (pid < 0) return Internal(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    setsid();
    const int null = open("/dev/null", O_RDONLY);
    const int out = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    dup2(null, STDIN_FILENO);
    dup2(out, STDOUT_FILENO);
    dup2(out, STDERR_FILENO);
    if (pass_fd == 3)
      fcntl(3, F_SETFD, 0);  // dup2 onto itself would keep close-on-exec
    else if (pass_fd >= 0)
      dup2(pass_fd, 3);
    if (!cgroup.empty() && !JoinCgroup(cgroup, getpid()).ok()) _exit(125);
    std::vector<char*> argv{const_cast<char*>(exe.c_str())};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(exe.c_str(), argv.data());
    _exit(127);
  }
  return pid;
}

std::string LastLine(const std::string& path) {
  auto text = ReadWholeFile(path);
  if (!text.ok()) return "";
  std::string t = *text;
  while (!t.empty() && t.back() == '\n') t.pop_back();
  return t.substr(t.rfind('\n') == std::string::npos ? 0 : t.rfind('\n') + 1);
}

// Starts the platform's switch and waits until it holds every TUN device.
Result<pid_t> StartSwitch(const std::string& dir) {
  int ready[2];
  if (pipe2(ready, O_CLOEXEC) != 0) return Internal(std::string("pipe: ") + std::strerror(errno));
  auto pid = SpawnSelf({"switch", dir}, dir + "/switch.log", ready[1]);
  close(ready[1]);
  if (!pid.ok()) {
    close(ready[0]);
    return pid.status();
  }
  pollfd p{ready[0], POLLIN, 0};
  char answer[8] = {};
  const bool answered = poll(&p, 1, 30000) == 1 && read(ready[0], answer, sizeof answer) > 0;
  close(ready[0]);
  if (!answered) {
    kill(*pid, SIGKILL);
    return Unavailable("the link switch did not start: " + LastLine(dir + "/switch.log"));
  }
  return *pid;
}

// Removes everything of platform `name`; whether anything was there, and what could not go.
std::pair<bool, std::string> TearDown(const std::string& name) {
  const std::string dir = StateDir(name);
  bool existed = fs::exists(dir);
  for (pid_t pid : SwitchesOf(dir)) {
    existed = true;
    kill(pid, SIGKILL);
  }
  std::string left;
  if (auto state = LoadState(name); state.ok() && RemoveHostPort(state->plan.host_device))
    existed = true;
  std::vector<std::string> cgroup_roots;
  for (CpuController c : {CpuController::kV1, CpuController::kV2}) {
    if (fs::is_directory(PlatformCgroupDir(c, name)))
      cgroup_roots.push_back(PlatformCgroupDir(c, name));
  }
  const std::string prefix = std::string(emulation::kNetnsPrefix) + name + ".";
  for (const std::string& ns : ListNamespaces(prefix)) {
    existed = true;
    const std::string node = ns.substr(prefix.size());
    std::string cgroup;
    for (const auto& root : cgroup_roots) {
      if (fs::is_directory(root + "/" + node)) cgroup = root + "/" + node;
    }
    const std::string failed = RemoveNode(ns, cgroup);
    if (!failed.empty()) left += " " + failed;
  }
  for (const auto& root : cgroup_roots) {
    existed = true;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(root, ec)) {
      if (!entry.is_directory()) continue;
      const std::string failed = RemoveNode("", entry.path().string());
      if (!failed.empty()) left += " " + failed;
    }
    if (rmdir(root.c_str()) != 0 && errno != ENOENT) left += " cgroup " + root;
    rmdir(fs::path(root).parent_path().c_str());  // aiac-emulate/, when no other platform is up
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (ec) left += " folder " + dir;
  return {existed, left.empty() ? left : left.substr(1)};
}

}  // namespace

int Up(const std::string& platform_file, int host_cores, uint64_t seed) {
  auto text = ReadWholeFile(platform_file);
  if (!text.ok()) return Fail(text.status(), 2);
  auto file = emulation::ParsePlatformFile(*text, platform_file);
  if (!file.ok()) return Fail(file.status(), 2);
  auto checked = emulation::PlanOsPlatform(*file, host_cores);
  if (!checked.ok()) return Fail(checked.status(), 2);
  if (geteuid() != 0)
    return Fail(Unavailable("up needs root (network namespaces, TUN devices, cgroups)"));
  const std::string name = checked->name;
  if (fs::exists(StateDir(name)) ||
      !ListNamespaces(std::string(emulation::kNetnsPrefix) + name + ".").empty()) {
    return Fail(InvalidArgument("platform '" + name + "' is up already: `aiac-emulate down " +
                                name + "` first"));
  }
  auto cpu = FindCpuController();
  if (!cpu.ok()) return Fail(cpu.status());
  // The first address slot no platform that is up holds.
  std::set<int> used;
  for (const auto& other : PlatformsUp()) {
    if (auto s = LoadState(other); s.ok()) used.insert(s->plan.slot);
  }
  for (const auto& device : ListHostPorts()) used.insert(std::stoi(device.substr(7)));
  int slot = 0;
  while (used.count(slot)) ++slot;
  auto plan = emulation::PlanOsPlatform(*file, host_cores, slot);
  if (!plan.ok()) return Fail(plan.status());

  PlatformState state{StateDir(name), *file, *plan, host_cores, *cpu, 0, {}};
  auto built = [&]() -> Status {
    AIAC_RETURN_IF_ERROR(SaveState(state, *text));
    for (const auto& node : plan->nodes) AIAC_RETURN_IF_ERROR(MakeNode(node, *cpu, name));
    AIAC_RETURN_IF_ERROR(MakeHostPort(*plan));
    AIAC_ASSIGN_OR_RETURN(state.switch_pid, StartSwitch(state.dir));
    for (size_t i = 0; i < plan->nodes.size(); ++i) {
      const auto& node = plan->nodes[i];
      const auto& cluster = *std::find_if(file->clusters.begin(), file->clusters.end(),
                                          [&](const auto& c) { return c.name == node.cluster; });
      if (!cluster.background || cluster.background->mean_jobs + cluster.background->std_jobs <= 0)
        continue;
      AIAC_ASSIGN_OR_RETURN(pid_t pid,
                            SpawnSelf({"load", state.dir, node.id, std::to_string(seed + i)},
                                      state.dir + "/load.log", -1, CgroupDir(*cpu, name, node.id)));
      state.load_pids.push_back(pid);
    }
    return SaveState(state, "");
  }();
  if (!built.ok()) {
    TearDown(name);
    return Fail(built);
  }
  std::printf("platform %s is up: %zu nodes; links: %s; cpu: %s of %d cores\n", name.c_str(),
              plan->nodes.size(), kLinkMode, Describe(*cpu), host_cores);
  std::printf("  %-16s %-15s (the host's port, undelayed: super-nodes, spawners, mpirun)\n",
              plan->host_device.c_str(), plan->host_address.c_str());
  for (const auto& node : plan->nodes) {
    std::printf("  %-16s %-15s power %-6g %.3f cores  (aiac-emulate exec %s -- CMD)\n",
                node.id.c_str(), node.address.c_str(), node.power, node.cores, node.id.c_str());
  }
  return 0;
}

int Down(const std::string& name_or_file, bool all) {
  if (geteuid() != 0) return Fail(Unavailable("down needs root"));
  std::set<std::string> names;
  if (all) {
    for (const auto& n : PlatformsUp()) names.insert(n);
    const std::string prefix = emulation::kNetnsPrefix;
    for (const auto& ns : ListNamespaces(prefix)) {
      names.insert(ns.substr(prefix.size(), ns.find('.') - prefix.size()));
    }
    for (CpuController c : {CpuController::kV1, CpuController::kV2}) {
      std::error_code ec;
      const fs::path root = fs::path(PlatformCgroupDir(c, "x")).parent_path();
      for (const auto& entry : fs::directory_iterator(root, ec)) {
        if (entry.is_directory()) names.insert(entry.path().filename().string());
      }
    }
  } else if (name_or_file.size() > 5 && name_or_file.ends_with(".toml")) {
    auto file = emulation::LoadPlatformFile(name_or_file);
    if (!file.ok()) return Fail(file.status(), 2);
    names.insert(file->name);
  } else {
    names.insert(name_or_file);
  }
  int code = 0;
  for (const auto& name : names) {
    const auto [existed, left] = TearDown(name);
    if (!left.empty()) {
      code = Fail(Unavailable("platform " + name + ": could not remove " + left));
    } else {
      std::printf("platform %s %s\n", name.c_str(), existed ? "is down" : "was not up");
    }
  }
  if (all) {
    for (const auto& device : ListHostPorts()) RemoveHostPort(device);
  }
  if (names.empty()) std::printf("no platform was up\n");
  return code;
}

// The node `node` (id or address) of the platform in `state`; else an error naming its nodes.
Result<const emulation::OsNode*> FindNode(const PlatformState& state, const std::string& node) {
  if (const emulation::OsNode* n = state.plan.Find(node)) return n;
  std::string ids;
  for (const auto& o : state.plan.nodes) ids += (ids.empty() ? "" : ", ") + o.id;
  return InvalidArgument("platform " + state.plan.name + " has no node '" + node +
                         "' (nodes: " + ids + ")");
}

int Exec(const std::string& platform, const std::string& node,
         const std::vector<std::string>& command) {
  if (command.empty()) return Fail(InvalidArgument("exec: no command after the node"), 2);
  auto state = PickPlatform(platform);
  if (!state.ok()) return Fail(state.status());
  auto n = FindNode(*state, node);
  if (!n.ok()) return Fail(n.status(), 2);
  if (Status s = EnterNode(**n, state->cpu, state->plan.name); !s.ok()) return Fail(s);
  std::vector<char*> argv;
  for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  std::fprintf(stderr, "aiac-emulate: cannot execute %s: %s\n", argv[0], std::strerror(errno));
  return 127;
}

int SetCpu(const std::string& platform, const std::string& node, double factor) {
  if (!(factor > 0) || factor > 64)
    return Fail(InvalidArgument("cpu: the factor must be above 0 and at most 64"), 2);
  auto state = PickPlatform(platform);
  if (!state.ok()) return Fail(state.status());
  auto n = FindNode(*state, node);
  if (!n.ok()) return Fail(n.status(), 2);
  const double cores = (*n)->cores * factor;
  if (Status s = SetCpuQuota(state->cpu, CgroupDir(state->cpu, state->plan.name, (*n)->id), cores);
      !s.ok()) {
    return Fail(s);
  }
  std::printf("%s: %.3f cores (%g x its %.3f)\n", (*n)->id.c_str(), cores, factor, (*n)->cores);
  return 0;
}

int Rsh(const std::vector<std::string>& args) {
  size_t i = 0;
  while (i < args.size() && args[i].starts_with("-")) ++i;  // ssh's options mean nothing here
  if (i + 1 >= args.size()) return Fail(InvalidArgument("rsh: HOST COMMAND... expected"), 2);
  const std::string& host = args[i];
  std::string words;
  for (size_t k = i + 1; k < args.size(); ++k) words += (words.empty() ? "" : " ") + args[k];
  for (const auto& name : PlatformsUp()) {
    auto state = LoadState(name);
    const emulation::OsNode* node = state.ok() ? state->plan.Find(host) : nullptr;
    if (!node) continue;
    // Each node a temporary directory of its own, as a host of its own has: Open MPI's daemons,
    // one per node, make their session directories under TMPDIR, named after the hostname the
    // nodes share here, and in one /tmp they raced ("mkdir ... File exists", orte_init failed,
    // about one launch in 20). Under the platform's state directory: `down` removes it.
    const std::string tmp = state->dir + "/tmp/" + node->id;
    std::error_code ec;
    fs::create_directories(tmp, ec);
    if (!ec) ::setenv("TMPDIR", tmp.c_str(), 1);
    return Exec(name, host, {"/bin/sh", "-c", words});
  }
  return Fail(NotFound("rsh: no platform that is up has a node " + host));
}

int PrintHostfile(const std::string& platform) {
  auto state = PickPlatform(platform);
  if (!state.ok()) return Fail(state.status());
  for (const auto& n : state->plan.nodes) std::printf("%s slots=1\n", n.address.c_str());
  return 0;
}

int PrintStatus(const std::string& platform) {
  std::vector<std::string> names;
  if (!platform.empty()) {
    names.push_back(platform);
  } else {
    names = PlatformsUp();
  }
  if (names.empty()) std::printf("no emulated platform is up\n");
  for (const auto& name : names) {
    auto state = LoadState(name);
    if (!state.ok()) return Fail(state.status());
    const auto switches = SwitchesOf(state->dir);
    std::printf(
        "platform %s: %zu nodes in %s, host %s; links: %s, switch %s; cpu: %s of %d cores\n",
        name.c_str(), state->plan.nodes.size(), state->plan.subnet.c_str(),
        state->plan.host_address.c_str(), kLinkMode,
        switches.empty() ? "NOT RUNNING" : ("pid " + std::to_string(switches[0])).c_str(),
        Describe(state->cpu), state->host_cores);
    std::printf("  %-16s %-12s %-15s %-7s %-7s %-9s %s\n", "node", "cluster", "address", "power",
                "cores", "namespace", "processes");
    for (const auto& n : state->plan.nodes) {
      const std::string cgroup = CgroupDir(state->cpu, name, n.id);
      std::ifstream procs(cgroup + "/cgroup.procs");
      int count = 0;
      for (std::string line; std::getline(procs, line);) ++count;
      // The quota now: `cpu` may have changed it since `up`.
      const auto quota = ReadCpuQuota(state->cpu, cgroup);
      const double cores = quota.ok() && *quota > 0 ? *quota : n.cores;
      char planned[48] = "";
      if (std::abs(cores - n.cores) > 5e-4)
        std::snprintf(planned, sizeof planned, "  (set by cpu; planned %.3f)", n.cores);
      std::printf("  %-16s %-12s %-15s %-7g %-7.3f %-9s %d%s\n", n.id.c_str(), n.cluster.c_str(),
                  n.address.c_str(), n.power, cores, NamespaceExists(n.netns) ? "yes" : "MISSING",
                  count, planned);
    }
  }
  return 0;
}

int Burn(double seconds) {
  if (!(seconds > 0)) return Fail(InvalidArgument("burn: seconds must be above 0"), 2);
  auto cpu_now = [] {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
  };
  const double cpu_start = cpu_now();
  const auto start = std::chrono::steady_clock::now();
  volatile uint64_t sink = 0;
  double wall = 0;
  while ((wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()) <
         seconds) {
    for (int i = 0; i < 10000; ++i) sink = sink + 1;
  }
  const double cpu = cpu_now() - cpu_start;
  std::printf("cores %.3f (%.3f s of CPU in %.3f s)\n", cpu / wall, cpu, wall);
  return 0;
}

int RunSwitch(const std::string& state_dir, int ready_fd) {
  auto state = LoadState(fs::path(state_dir).filename().string());
  if (!state.ok()) return Fail(state.status());
  Logger log = MakeLogger("emulate-switch", spdlog::level::info);
  // Packets leave on timers: the kernel's default slack (50 us) would add to every link's
  // latency, a lot for a LAN's 50 us.
  prctl(PR_SET_TIMERSLACK, 1UL);
  std::vector<TunSwitch::Port> ports;
  for (const auto& n : state->plan.nodes) {
    auto fd = OpenTunIn(n.netns, "aiac0");
    if (!fd.ok()) return Fail(fd.status());
    ports.push_back({n.id, n.cluster, n.address, *fd});
  }
  auto host = OpenTunIn("", state->plan.host_device);
  if (!host.ok()) return Fail(host.status());
  ports.push_back({"host", "", state->plan.host_address, *host});
  boost::asio::io_context io;
  TunSwitch sw(io, state->file, std::move(ports), log);
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code&, int) { sw.Stop(); });
  sw.Start();
  log->info("platform {}: switching {} nodes", state->plan.name, state->plan.nodes.size());
  if (write(ready_fd, "ready\n", 6) != 6)
    return Fail(IoError("cannot tell `up` the switch is ready"));
  close(ready_fd);
  io.run();
  const auto& c = sw.counters();
  log->info("stopped: {} packets delivered, {} dropped at full queues, {} unroutable", c.delivered,
            c.dropped_full, c.dropped_unrouted);
  return 0;
}

int RunLoad(const std::string& state_dir, const std::string& node, uint64_t seed) {
  auto state = LoadState(fs::path(state_dir).filename().string());
  if (!state.ok()) return Fail(state.status());
  const emulation::OsNode* n = state->plan.Find(node);
  if (!n) return Fail(NotFound("no node " + node));
  for (const auto& c : state->file.clusters) {
    if (c.name == n->cluster && c.background) RunBackgroundLoad(*c.background, seed);
  }
  return Fail(NotFound("node " + node + " has no background load"));
}

}  // namespace aiac::emulate
