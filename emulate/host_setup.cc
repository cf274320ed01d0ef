#include "emulate/host_setup.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

namespace aiac::emulate {

namespace fs = std::filesystem;

namespace {

constexpr const char* kCgroupRoot = "/sys/fs/cgroup";
constexpr const char* kNetnsDir = "/run/netns";
constexpr int kPeriodUs = 100000;  // the CFS period: quotas are fractions of 100 ms

Status WriteControl(const std::string& path, const std::string& value) {
  std::ofstream out(path);
  out << value;
  out.flush();
  if (!out) return IoError("cannot write '" + value + "' to " + path);
  return Status::Ok();
}

std::vector<pid_t> ReadPids(const std::string& path) {
  std::vector<pid_t> pids;
  std::ifstream in(path);
  for (pid_t p; in >> p;) pids.push_back(p);
  return pids;
}

// Runs argv (looked up in PATH), its stdin and the other stream on /dev/null; its exit status,
// and what it wrote on stdout (`stream` STDOUT_FILENO) or stderr (STDERR_FILENO) in `text`.
int Run(const std::vector<std::string>& argv, int stream, std::string& text) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    text = std::strerror(errno);
    return -1;
  }
  const pid_t pid = fork();
  if (pid < 0) {
    text = std::strerror(errno);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    return -1;
  }
  if (pid == 0) {
    const int null = open("/dev/null", O_RDWR);
    dup2(null, STDIN_FILENO);
    dup2(null, STDOUT_FILENO);
    dup2(null, STDERR_FILENO);
    dup2(pipe_fds[1], stream);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    if (stream == STDERR_FILENO)
      dprintf(STDERR_FILENO, "cannot execute %s: %s\n", args[0], std::strerror(errno));
    _exit(127);
  }
  close(pipe_fds[1]);
  char buffer[512];
  for (ssize_t n; (n = read(pipe_fds[0], buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  close(pipe_fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// SIGKILLs the processes `list` gives until it gives none (new ones may be forking
// while we kill), for up to 5 s.
void KillAll(const std::function<std::vector<pid_t>()>& list) {
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (;;) {
    const std::vector<pid_t> pids = list();
    if (pids.empty() || std::chrono::steady_clock::now() > limit) return;
    for (pid_t p : pids) {
      if (p != getpid()) kill(p, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::vector<pid_t> NamespacePids(const std::string& netns) {
  std::string out;  // `ip netns pids` prints them one per line
  Run({"ip", "netns", "pids", netns}, STDOUT_FILENO, out);
  std::vector<pid_t> pids;
  std::istringstream in(out);
  for (pid_t p; in >> p;) pids.push_back(p);
  return pids;
}

}  // namespace

Result<CpuController> FindCpuController() {
  std::ifstream unified(std::string(kCgroupRoot) + "/cgroup.controllers");
  std::string controllers;
  if (unified && std::getline(unified, controllers)) {
    std::istringstream words(controllers);
    for (std::string w; words >> w;) {
      if (w == "cpu") return CpuController::kV2;
    }
  }
  if (fs::exists(std::string(kCgroupRoot) + "/cpu/cpu.cfs_quota_us")) return CpuController::kV1;
  return Unavailable(
      "no CPU controller: neither cgroup v2 with 'cpu' in /sys/fs/cgroup/cgroup.controllers nor "
      "cgroup v1's /sys/fs/cgroup/cpu/cpu.cfs_quota_us");
}

const char* Describe(CpuController controller) {
  return controller == CpuController::kV2 ? "cgroup v2 cpu.max" : "cgroup v1 cpu.cfs_quota_us";
}

std::string PlatformCgroupDir(CpuController controller, const std::string& platform) {
  const std::string root =
      controller == CpuController::kV2 ? kCgroupRoot : std::string(kCgroupRoot) + "/cpu";
  return root + "/aiac-emulate/" + platform;
}

std::string CgroupDir(CpuController controller, const std::string& platform,
                      const std::string& node) {
  return PlatformCgroupDir(controller, platform) + "/" + node;
}

Status RunCommand(const std::vector<std::string>& argv) {
  std::string err;
  const int code = Run(argv, STDERR_FILENO, err);
  if (code == 0) return Status::Ok();
  std::string command;
  for (const auto& a : argv) command += (command.empty() ? "" : " ") + a;
  const std::string first_line = err.substr(0, err.find('\n'));
  return Unavailable(
      "`" + command + "` failed" +
      (first_line.empty() ? " (exit " + std::to_string(code) + ")" : ": " + first_line));
}

Status MakeNode(const emulation::OsNode& node, CpuController controller,
                const std::string& platform) {
  if (NamespaceExists(node.netns))
    return InvalidArgument("network namespace " + node.netns + " exists already");
  const std::string& ns = node.netns;
  for (const std::vector<std::string>& command : std::vector<std::vector<std::string>>{
           {"ip", "netns", "add", ns},
           {"ip", "-n", ns, "link", "set", "lo", "up"},
           {"ip", "netns", "exec", ns, "ip", "tuntap", "add", "dev", "aiac0", "mode", "tun"},
           {"ip", "-n", ns, "addr", "add", node.address + "/16", "dev", "aiac0"},
           {"ip", "-n", ns, "link", "set", "aiac0", "up"}}) {
    AIAC_RETURN_IF_ERROR(RunCommand(command));
  }

  const std::string dir = CgroupDir(controller, platform, node.id);
  std::error_code ec;
  if (controller == CpuController::kV2) {
    // v2: a controller is usable in a group only when every parent hands it down.
    std::string parent = kCgroupRoot;
    for (const std::string& part : {std::string("aiac-emulate"), platform}) {
      AIAC_RETURN_IF_ERROR(WriteControl(parent + "/cgroup.subtree_control", "+cpu"));
      parent += "/" + part;
      fs::create_directory(parent, ec);
      if (ec) return IoError("cannot make " + parent + ": " + ec.message());
    }
    AIAC_RETURN_IF_ERROR(WriteControl(parent + "/cgroup.subtree_control", "+cpu"));
  } else {
    fs::create_directories(PlatformCgroupDir(controller, platform), ec);
    if (ec)
      return IoError("cannot make " + PlatformCgroupDir(controller, platform) + ": " +
                     ec.message());
  }
  fs::create_directory(dir, ec);
  if (ec) return IoError("cannot make " + dir + ": " + ec.message());
  return SetCpuQuota(controller, dir, node.cores);
}

Status SetCpuQuota(CpuController controller, const std::string& dir, double cores) {
  const int quota = std::max(1000, static_cast<int>(std::lround(cores * kPeriodUs)));
  if (controller == CpuController::kV2)
    return WriteControl(dir + "/cpu.max", std::to_string(quota) + " " + std::to_string(kPeriodUs));
  AIAC_RETURN_IF_ERROR(WriteControl(dir + "/cpu.cfs_period_us", std::to_string(kPeriodUs)));
  return WriteControl(dir + "/cpu.cfs_quota_us", std::to_string(quota));
}

Result<double> ReadCpuQuota(CpuController controller, const std::string& dir) {
  double quota = -1, period = kPeriodUs;
  if (controller == CpuController::kV2) {
    std::ifstream in(dir + "/cpu.max");
    std::string max;
    if (!(in >> max >> period)) return IoError("cannot read " + dir + "/cpu.max");
    if (max == "max") return -1.0;
    quota = std::atof(max.c_str());
  } else {
    std::ifstream q(dir + "/cpu.cfs_quota_us"), p(dir + "/cpu.cfs_period_us");
    if (!(q >> quota) || !(p >> period)) return IoError("cannot read " + dir + "/cpu.cfs_quota_us");
    if (quota < 0) return -1.0;
  }
  if (!(period > 0)) return IoError("a period of 0 in " + dir);
  return quota / period;
}

Status MakeHostPort(const emulation::OsPlatform& plan) {
  if (fs::exists("/sys/class/net/" + plan.host_device))
    return InvalidArgument("the host has a device " + plan.host_device + " already");
  for (const std::vector<std::string>& command : std::vector<std::vector<std::string>>{
           {"ip", "tuntap", "add", "dev", plan.host_device, "mode", "tun"},
           {"ip", "addr", "add", plan.host_address + "/16", "dev", plan.host_device},
           {"ip", "link", "set", plan.host_device, "up"}}) {
    AIAC_RETURN_IF_ERROR(RunCommand(command));
  }
  return Status::Ok();
}

bool RemoveHostPort(const std::string& device) {
  if (!fs::exists("/sys/class/net/" + device)) return false;
  return RunCommand({"ip", "link", "del", device}).ok();
}

std::vector<std::string> ListHostPorts() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/sys/class/net", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("aiacemu", 0) == 0 && name.size() > 7 &&
        name.find_first_not_of("0123456789", 7) == std::string::npos) {
      names.push_back(name);
    }
  }
  return names;
}

std::string RemoveNode(const std::string& netns, const std::string& cgroup_dir) {
  std::string left;
  if (!cgroup_dir.empty() && fs::exists(cgroup_dir)) {
    KillAll([&] { return ReadPids(cgroup_dir + "/cgroup.procs"); });
    // A killed process leaves its cgroup when it has been reaped: wait for that a little.
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (rmdir(cgroup_dir.c_str()) != 0 && errno == EBUSY &&
           std::chrono::steady_clock::now() < limit) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (fs::exists(cgroup_dir)) left += " cgroup " + cgroup_dir;
  }
  if (NamespaceExists(netns)) {
    KillAll([&] { return NamespacePids(netns); });
    if (!RunCommand({"ip", "netns", "del", netns}).ok()) left += " namespace " + netns;
  }
  return left.empty() ? left : left.substr(1);
}

Status JoinCgroup(const std::string& dir, pid_t pid) {
  return WriteControl(dir + "/cgroup.procs", std::to_string(pid));
}

Status EnterNode(const emulation::OsNode& node, CpuController controller,
                 const std::string& platform) {
  const std::string path = std::string(kNetnsDir) + "/" + node.netns;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NotFound("no namespace " + path + ": " + std::strerror(errno));
  const int entered = setns(fd, CLONE_NEWNET);
  const int saved = errno;
  close(fd);
  if (entered != 0) return Unavailable("cannot enter " + path + ": " + std::strerror(saved));
  return JoinCgroup(CgroupDir(controller, platform, node.id), getpid());
}

std::vector<std::string> ListNamespaces(const std::string& prefix) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(kNetnsDir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0) names.push_back(name);
  }
  return names;
}

bool NamespaceExists(const std::string& netns) {
  return fs::exists(std::string(kNetnsDir) + "/" + netns);
}

}  // namespace aiac::emulate
