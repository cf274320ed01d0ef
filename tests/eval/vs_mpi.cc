// aiac against MPI (PETSc) on the same OS-emulated platforms (docs/results.md, "Versus MPI"):
// every platform is laid out by aiac-emulate (namespaces, CPU cgroups, the link switch), and
// both solve the same Matrix Market systems there with the same processes, to the same relative
// residual 1e-8: aiac's CG app async and sync (`aiac-spawner run --emulation os`, one node kept
// spare), and PETSc's KSPCG under mpirun with its ranks on the nodes aiac's tasks ran on, with
// each of three preconditioners, the best of which is PETSc's time. With a fault, one node is
// killed at a third of the fault-free time: aiac replaces it from its checkpoints (the spare
// node takes over); PETSc has no way on but a full rerun without that node (on the spare), so
// its time is a third of its best fault-free time plus that rerun. Every residual is computed
// here again from the solution files. Never fails on a time.
//
//   vs_mpi --quick|--full [--seed S] [--out F.json] [--systems LIST] [--only REGEX]
//
// --systems: comma-separated, each banded-N (N rows, bandwidth 8, the seed's), poisson2d-K (a
// K x K grid), poisson3d-K (K x K x K) or a symmetric positive definite Matrix Market file
// (*.mtx); b = A * ones for every one. Default: banded-40000,poisson2d-120,poisson3d-24 with
// --quick, banded-200000,poisson2d-300,poisson3d-40 with --full. --only runs the
// platform/system pairs matching REGEX ("vs-two-sites/poisson2d-120").
//
// Writes F.json ({"rows": [{platform, system, tool, config, faults, seconds, residual, ...}]})
// and F.png beside it. Needs root, Open MPI and PETSc (conf/bootstrap.sh --with-petsc).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "apps/cg/matrix_market.h"
#include "bench/shared_tunables.h"
#include "emulation/platform_file.h"
#include "emulation/platform_scaling.h"
#include "eval/eval_support.h"
#include "eval/vs_mpi_platforms.h"
#include "eval/vs_mpi_runs.h"
#include "spawner/child_process.h"

using namespace aiac;
using namespace aiac::eval;
namespace fs = std::filesystem;

namespace {

struct Args {
  bool full = false;
  uint64_t seed = 1;
  std::string out = "vs_mpi.json";
  std::string systems;  // empty: the mode's
  std::string only;     // platform/system filter
};

Args Parse(int argc, char** argv) {
  Args a;
  bool chosen = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quick" || arg == "--full") {
      a.full = arg == "--full";
      chosen = true;
    } else if (arg == "--seed" && i + 1 < argc) {
      a.seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--out" && i + 1 < argc) {
      a.out = argv[++i];
    } else if (arg == "--systems" && i + 1 < argc) {
      a.systems = argv[++i];
    } else if (arg == "--only" && i + 1 < argc) {
      a.only = argv[++i];
    } else {
      chosen = false;
      break;
    }
  }
  if (!chosen || a.seed == 0) {
    std::fprintf(stderr,
                 "usage: vs_mpi --quick|--full [--seed S (> 0)] [--out F.json] [--systems LIST] "
                 "[--only REGEX]\n");
    std::exit(2);
  }
  return a;
}

// Runs a shell command; its standard output (empty on failure).
std::string Output(const std::string& command) {
  std::string out;
  if (FILE* p = popen(command.c_str(), "r")) {
    char buffer[4096];
    for (size_t n; (n = fread(buffer, 1, sizeof buffer, p)) > 0;) out.append(buffer, n);
    if (pclose(p) != 0) out.clear();
  }
  return out;
}

// Writes `a` as the system `name` (b = A * ones).
System WriteSystem(const std::string& dir, const std::string& name, cg::SpMat a) {
  a.makeCompressed();
  System s{name, dir + "/" + name + ".mtx", std::move(a), {}};
  s.b = s.a * Eigen::VectorXd::Ones(s.a.cols());
  if (Status w = cg::WriteMatrixMarketMatrix(s.matrix, s.a, /*symmetric=*/true); !w.ok()) {
    std::fprintf(stderr, "vs_mpi: %s\n", w.message().c_str());
    std::exit(1);
  }
  return s;
}

// One item of --systems; exits 2 on one that is none of the forms.
System MakeSystem(const std::string& dir, const std::string& item, uint64_t seed) {
  std::smatch m;
  if (std::regex_match(item, m, std::regex(R"(banded-([0-9]+))"))) {
    return WriteSystem(dir, item, cg::Generate({std::stoi(m[1]), 8, seed}).a);
  }
  if (std::regex_match(item, m, std::regex(R"(poisson2d-([0-9]+))"))) {
    return WriteSystem(dir, item, cg::GridLaplacian(std::stoi(m[1]), std::stoi(m[1])));
  }
  if (std::regex_match(item, m, std::regex(R"(poisson3d-([0-9]+))")))
    return WriteSystem(dir, item, cg::GridLaplacian3d(std::stoi(m[1])));
  if (item.ends_with(".mtx")) {
    auto a = cg::ReadMatrixMarketRows(item);
    if (!a.ok()) {
      std::fprintf(stderr, "vs_mpi: %s\n", a.status().message().c_str());
      std::exit(2);
    }
    System s{fs::path(item).stem().string(), fs::absolute(item).string(), std::move(*a), {}};
    s.b = s.a * Eigen::VectorXd::Ones(s.a.cols());
    return s;
  }
  std::fprintf(stderr,
               "vs_mpi: system '%s' is none of banded-N, poisson2d-K, poisson3d-K, FILE.mtx\n",
               item.c_str());
  std::exit(2);
}

struct Config {
  const char* name;
  std::vector<std::string> options;
};
const std::vector<Config>& PetscConfigs() {
  static const std::vector<Config> configs{
      {"bjacobi-icc0", {}},
      {"asm1-cholesky", {"-pc_type", "asm", "-pc_asm_overlap", "1", "-sub_pc_type", "cholesky"}},
      {"gamg", {"-pc_type", "gamg"}}};
  return configs;
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = Parse(argc, argv);
  const std::string bin = spawner::SelfDirectory();
  if (geteuid() != 0) {
    std::fprintf(stderr, "vs_mpi: needs root (aiac-emulate makes namespaces and cgroups)\n");
    return 2;
  }
  if (!fs::exists(bin + "/petsc_cg_driver") || !fs::exists(MPIEXEC)) {
    std::fprintf(stderr, "vs_mpi: no PETSc driver or mpirun (conf/bootstrap.sh --with-petsc)\n");
    return 2;
  }
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  const fs::path out = fs::absolute(args.out);
  const std::string work = out.parent_path().string() + "/" + out.stem().string() + "-work";
  fs::remove_all(work);
  fs::create_directories(work);
  const std::regex only(args.only.empty() ? ".*" : args.only);

  // The systems: banded SPD, 2-D and 3-D Poisson, or the user's.
  std::vector<System> systems;
  std::istringstream list(!args.systems.empty() ? args.systems
                          : args.full           ? "banded-200000,poisson2d-300,poisson3d-40"
                                                : "banded-40000,poisson2d-120,poisson3d-24");
  for (std::string item; std::getline(list, item, ',');)
    systems.push_back(MakeSystem(work, item, args.seed));

  // The platforms: 6 nodes each (5 processes and a spare), the MAHEVE ones scaled down.
  std::vector<emulation::PlatformFile> platforms{HomogeneousPlatform("vs-homogeneous", 6),
                                                 TwoSitesPlatform("vs-two-sites", 3)};
  for (const char* hd : args.full ? std::vector<const char*>{"hd008", "hd050", "hd072"}
                                  : std::vector<const char*>{"hd072"}) {
    auto p = emulation::LoadPlatformFile(std::string(AIAC_SOURCE_DIR) + "/conf/platforms/maheve-" +
                                         hd + ".toml");
    if (!p.ok()) {
      std::fprintf(stderr, "vs_mpi: %s\n", p.status().message().c_str());
      return 1;
    }
    platforms.push_back(emulation::ScalePlatform(*p, 6, std::string("vs-") + hd));
  }

  nlohmann::json rows = nlohmann::json::array();
  std::ostringstream plot;
  const std::string tunables = bench::ShareMallocTunables();
  std::printf(
      "aiac vs PETSc (best of %zu preconditioners), relative residual 1e-8, seed %llu, both "
      "with GLIBC_TUNABLES=%s\n",
      PetscConfigs().size(), static_cast<unsigned long long>(args.seed), tunables.c_str());
  std::printf("%-16s %-15s %-6s | %8s %8s %8s %-13s | %9s %9s\n", "platform", "system", "fault",
              "async", "sync", "PETSc", "(best)", "async/best", "sync/best");
  for (const auto& platform : platforms) {
    const std::string file = work + "/" + platform.name + ".toml", emulate = bin + "/aiac-emulate";
    std::ofstream(file) << emulation::FormatPlatformFile(platform);
    Output(emulate + " down " + file + " 2>&1");
    const std::string up = Output(emulate + " up " + file + " 2>&1");
    if (up.empty()) {
      std::fprintf(stderr, "vs_mpi: aiac-emulate up %s failed\n", file.c_str());
      return 1;
    }
    // "links: user-space switch (TUN); cpu: cgroup v1 ..." from up's first line: what ran.
    const std::string first = up.substr(0, up.find('\n'));
    const std::string mode = first.substr(std::min(first.find("links:"), first.size()));
    std::printf("platform %s: %zu nodes in %zu clusters, heterogeneity degree %.2f; %s\n",
                platform.name.c_str(), platform.node_count(), platform.clusters.size(),
                platform.HeterogeneityDegree(), mode.c_str());
    // Node ids in file order, and their addresses (the hostfile's order).
    std::vector<std::string> ids, addresses;
    for (const auto& c : platform.clusters) {
      for (size_t k = 1; k <= c.powers.size(); ++k)
        ids.push_back(emulation::PlatformFile::NodeId(c.name, k));
    }
    std::istringstream hostfile(Output(emulate + " hostfile " + platform.name));
    for (std::string line; std::getline(hostfile, line);)
      addresses.push_back(line.substr(0, line.find(' ')));
    std::map<std::string, std::string> address_of;
    for (size_t i = 0; i < ids.size() && i < addresses.size(); ++i)
      address_of[ids[i]] = addresses[i];
    const std::string subnet = addresses.at(0).substr(0, addresses[0].find('.', 3) + 1) + "0.0/16";
    const int tasks = static_cast<int>(ids.size()) - 1;

    for (const System& s : systems) {
      if (!std::regex_search(platform.name + "/" + s.name, only)) continue;
      const std::string tag = platform.name + "-" + s.name;
      auto row = [&](const char* tool, const std::string& config, int faults, const Solve& r) {
        rows.push_back({{"platform", platform.name},
                        {"system", s.name},
                        {"rows", s.a.rows()},
                        {"tool", tool},
                        {"config", config},
                        {"faults", faults},
                        {"seconds", r.ok ? nlohmann::json(r.seconds) : nlohmann::json(nullptr)},
                        {"residual", r.residual},
                        {"detail", r.detail},
                        {"processes", tasks},
                        {"emulation", mode},
                        {"glibc_tunables", tunables}});
      };
      const Solve async = RunAiac(work, tag + "-async", s, file, tasks, false, 0, args.seed);
      row("aiac", "async", 0, async);
      const Solve sync = RunAiac(work, tag + "-sync", s, file, tasks, true, 0, args.seed);
      row("aiac", "sync", 0, sync);
      // PETSc on the nodes aiac's tasks ran on (the first ones when aiac failed).
      std::vector<std::string> nodes =
          async.ok ? async.nodes : std::vector<std::string>(ids.begin(), ids.end() - 1);
      std::vector<std::string> used;
      for (const auto& n : nodes) used.push_back(address_of[n]);
      Solve best;
      std::string best_config = "-";
      for (const Config& c : PetscConfigs()) {
        const Solve r = RunPetsc(work, tag + "-petsc-" + c.name, s, used, subnet, c.options);
        row("petsc", c.name, 0, r);
        if (r.ok && (!best.ok || r.seconds < best.seconds)) {
          best = r;
          best_config = c.name;
        }
      }
      auto line = [&](const char* fault, const Solve& a, const Solve& y, const Solve& p,
                      const std::string& config) {
        auto cell = [](const Solve& r) {
          return r.ok ? Fixed(r.seconds) + "s" : std::string("failed");
        };
        auto ratio = [&](const Solve& r) {
          return r.ok && p.ok ? Fixed(r.seconds / p.seconds) + "x" : std::string("-");
        };
        std::printf("%-16s %-15s %-6s | %8s %8s %8s %-13s | %9s %9s\n", platform.name.c_str(),
                    s.name.c_str(), fault, cell(a).c_str(), cell(y).c_str(), cell(p).c_str(),
                    ("(" + config + ")").c_str(), ratio(a).c_str(), ratio(y).c_str());
        std::fflush(stdout);
        auto value = [](const Solve& r) { return r.ok ? Fixed(r.seconds) : std::string("?"); };
        plot << '"' << platform.name.substr(3) << ' ' << s.name << ' ' << fault << "\" " << value(a)
             << ' ' << value(y) << ' ' << value(p) << "\n";
      };
      line("none", async, sync, best, best_config);

      // One node killed at a third of the fault-free time.
      auto kill_after = [](const Solve& r) {
        return r.ok ? std::max(0.05, r.seconds / 3 - r.setup) : 1.0;
      };
      Solve async_f =
          RunAiac(work, tag + "-async-kill", s, file, tasks, false, kill_after(async), args.seed);
      auto no_kill = [](Solve& r) {
        if (r.ok && r.victim.empty()) r.detail += ", ended before the kill";
      };
      no_kill(async_f);
      row("aiac", "async", 1, async_f);
      Solve sync_f =
          RunAiac(work, tag + "-sync-kill", s, file, tasks, true, kill_after(sync), args.seed);
      no_kill(sync_f);
      row("aiac", "sync", 1, sync_f);
      Solve petsc_f;
      if (best.ok) {
        // The same node lost (aiac's victim, else the first), the spare taking its place.
        const std::string victim = async_f.victim.empty() ? nodes.front() : async_f.victim;
        std::vector<std::string> rerun;
        for (const auto& n : nodes) {
          if (n != victim) rerun.push_back(address_of[n]);
        }
        for (const auto& id : ids) {
          if (id != victim && std::find(nodes.begin(), nodes.end(), id) == nodes.end()) {
            rerun.push_back(address_of[id]);
            break;
          }
        }
        const auto& config = *std::find_if(PetscConfigs().begin(), PetscConfigs().end(),
                                           [&](const Config& c) { return best_config == c.name; });
        petsc_f = RunPetsc(work, tag + "-petsc-rerun", s, rerun, subnet, config.options);
        petsc_f.seconds += best.seconds / 3;
        petsc_f.detail +=
            " (a third of " + Fixed(best.seconds) + " s, then a rerun without " + victim + ")";
      }
      row("petsc", best_config, 1, petsc_f);
      line("1 kill", async_f, sync_f, petsc_f, best_config);
    }
    Output(emulate + " down " + platform.name + " 2>&1");
  }

  std::ofstream(out) << nlohmann::json{{"rows", rows}}.dump(2) << "\n";
  std::printf("table: %s\n", out.string().c_str());
  Plot(out.parent_path().string(), out.stem().string(), plot.str(),
       "set style data histograms\nset style histogram clustered gap 1\n"
       "set style fill solid 0.8 border -1\nset datafile missing '?'\n"
       "set ylabel 'seconds to a relative residual of 1e-8'\nset xtics rotate by -40 font ',8'\n"
       "set key top left\nset title 'aiac vs PETSc on OS-emulated platforms'\n"
       "plot datafile using 2:xtic(1) title 'aiac async', '' using 3 title 'aiac sync', "
       "'' using 4 title 'PETSc, best preconditioner'\n");
  fs::remove_all(work);
  return 0;
}
