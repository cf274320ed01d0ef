#include "eval/vs_mpi_runs.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "apps/cg/matrix_market.h"
#include "eval/eval_support.h"
#include "spawner/child_process.h"

namespace aiac::eval {

namespace {

using Clock = std::chrono::steady_clock;

constexpr double kResidual = 1e-8;

double Since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

std::string Fixed(double v) {
  char s[32];
  std::snprintf(s, sizeof s, "%.2f", v);
  return s;
}

double ResidualOf(const System& s, const std::string& file) {
  auto x = cg::ReadMatrixMarketVector(file, s.a.rows());
  if (!x.ok()) return -1;
  const Eigen::VectorXd r = s.b - s.a * Eigen::Map<Eigen::VectorXd>(x->data(), s.a.rows());
  return r.norm() / s.b.norm();
}

Solve RunAiac(const std::string& dir, const std::string& tag, const System& s,
              const std::string& platform, int tasks, bool sync, double kill_after, uint64_t seed) {
  const std::string job = dir + "/" + tag + ".toml", json = dir + "/" + tag + ".json",
                    x = dir + "/" + tag + ".x.mtx", log = dir + "/" + tag + ".log";
  std::filesystem::remove(x);
  std::ofstream(job) << "name = \"vs-mpi\"\napp = \"cg\"\ntasks = " << tasks
                     << "\ntimeout_s = 1800\n[params]\nmatrix = \"" << s.matrix
                     << "\"\nresidual_tolerance = " << kResidual << "\noutput = \"" << x << "\"\n";
  std::vector<std::string> args{job,  "--platform", platform, "--emulation",
                                "os", "--local",    "--quiet"};
  if (sync) args.push_back("--sync");
  if (kill_after > 0) {
    for (const std::string& a :
         {std::string("--kill-every"), std::to_string(kill_after), std::string("--kill-count"),
          std::string("1"), std::string("--kill-seed"), std::to_string(seed)}) {
      args.push_back(a);
    }
  }
  Solve r;
  const auto t0 = Clock::now();
  const nlohmann::json j = RunSpawner(args, json, log);
  r.seconds = Since(t0);
  if (j.is_discarded() || j.value("status", "") != "converged") {
    r.detail = "not converged (" + j.value("status", std::string("no summary")) + "; " +
               j.value("error", std::string("see ") + log) + ")";
    return r;
  }
  for (const auto& t : j["per_task"]) r.nodes.push_back(t["daemon"]);
  if (!j["replacements"].empty()) r.victim = j["replacements"][0]["failed"];
  const auto& p = j["phases"];
  r.setup = p["read"].get<double>() + p["prepare"].get<double>() + p["assign"].get<double>();
  r.detail = "iterations " + std::to_string(j["iterations"]["min"].get<int>()) + ".." +
             std::to_string(j["iterations"]["max"].get<int>()) + ", phases read " +
             Fixed(p["read"]) + " / prepare " + Fixed(p["prepare"]) + " / assign " +
             Fixed(p["assign"]) + " / iterate " + Fixed(p["iterate"]) + " s" +
             (r.victim.empty() ? "" : ", " + r.victim + " killed and replaced");
  r.residual = ResidualOf(s, x);
  r.ok = r.residual >= 0 && r.residual <= 1.01 * kResidual;
  if (!r.ok) r.detail += ", residual not met";
  return r;
}

Solve RunPetsc(const std::string& dir, const std::string& tag, const System& s,
               const std::vector<std::string>& addresses, const std::string& subnet,
               const std::vector<std::string>& options) {
  const std::string x = dir + "/" + tag + ".x.mtx", log = dir + "/" + tag + ".log",
                    hosts = dir + "/" + tag + ".hosts";
  std::filesystem::remove(x);
  {
    std::ofstream h(hosts);
    for (const auto& a : addresses) h << a << " slots=1\n";
  }
  const std::string bin = spawner::SelfDirectory();
  std::vector<std::string> argv{MPIEXEC,
                                "-n",
                                std::to_string(addresses.size()),
                                "--hostfile",
                                hosts,
                                "--mca",
                                "plm_rsh_agent",
                                bin + "/aiac-emulate rsh",
                                "--mca",
                                "oob_tcp_if_include",
                                subnet,
                                "--mca",
                                "btl_tcp_if_include",
                                subnet,
                                "--mca",
                                "btl",
                                "tcp,self",  // never shared memory: the ranks are on distinct nodes
                                bin + "/petsc_cg_driver",
                                s.matrix,
                                "1e-8",
                                x};
  argv.insert(argv.end(), options.begin(), options.end());
  Solve r;
  const auto t0 = Clock::now();
  auto child = spawner::ChildProcess::Spawn(argv, log);
  const int code = child.ok() ? child->WaitFor(std::chrono::minutes(30)).value_or(-1) : -1;
  r.seconds = Since(t0);
  if (code != 0) {
    r.detail = "failed (exit " + std::to_string(code) + "), see " + log;
    return r;
  }
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("{", 0) != 0) continue;
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded()) continue;
    r.detail = "iterations " + std::to_string(j.value("iterations", -1)) + ", read " +
               Fixed(j.value("read", 0.0)) + " / assemble " + Fixed(j.value("assemble", 0.0)) +
               " / solve " + Fixed(j.value("solve", 0.0)) + " s";
    if (j.value("reason", 0) <= 0)
      r.detail += ", PETSc reason " + std::to_string(j.value("reason", 0));
  }
  r.residual = ResidualOf(s, x);
  r.ok = r.residual >= 0 && r.residual <= 1.01 * kResidual;
  if (!r.ok) r.detail += ", residual not met";
  return r;
}

}  // namespace aiac::eval
