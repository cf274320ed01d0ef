// MAHEVE on 10,000 tasks / 12,000 nodes / 20 clusters (issue target: under 1 s), timed against
// the default mapping and AIAC-QM on the same instance in the same run. Prints; never fails on
// a time. Run: build/bin/mapping_bench [tasks nodes clusters]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "mapping/mapper.h"
#include "model/et_model.h"

using namespace aiac;

namespace {

struct Instance {
  model::Platform platform;
  model::Tig tig;
};

// A banded TIG like the multisplitting CG's (8-20 neighbours per task) on clusters of varied
// size and power.
Instance Make(int tasks, int nodes, int clusters) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<model::ClusterSpec> cs(clusters);
  for (int c = 0; c < clusters; ++c) {
    cs[c].name = "c" + std::to_string(c);
    cs[c].latency = 0.0001;
  }
  const double base_power[] = {1, 1.5, 2, 3};
  for (int n = 0; n < nodes; ++n) {
    const int c = static_cast<int>(rng() % clusters);
    cs[c].nodes.push_back(
        {"n" + std::to_string(n), base_power[c % 4] * (0.9 + 0.2 * unit(rng)), unit(rng) > 0.05});
  }
  std::vector<model::InterLatency> inter;
  for (int a = 0; a < clusters; ++a)
    for (int b = a + 1; b < clusters; ++b)
      inter.push_back({cs[a].name, cs[b].name, 0.01 + 0.04 * unit(rng)});
  std::vector<model::TaskSpec> ts;
  for (int t = 0; t < tasks; ++t) ts.push_back({t, 100 + 50 * unit(rng)});
  std::vector<model::EdgeSpec> es;
  for (int t = 0; t < tasks; ++t) {
    const int reach = 4 + static_cast<int>(rng() % 7);
    for (int k = 1; k <= reach && t + k < tasks; ++k)
      es.push_back({t, t + k, 10.0 * (reach - k + 1)});
  }
  return {std::move(*model::Platform::Build(std::move(cs), std::move(inter))),
          std::move(*model::Tig::Build(std::move(ts), std::move(es)))};
}

double Seconds(const mapping::Mapper& mapper, const Instance& in, double& et) {
  const auto start = std::chrono::steady_clock::now();
  auto m = mapper.Map(in.platform, in.tig);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  et = model::AppTime(in.platform, in.tig, m.placement.node_of_task());
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  const int tasks = argc > 1 ? std::atoi(argv[1]) : 10000;
  const int nodes = argc > 2 ? std::atoi(argv[2]) : 12000;
  const int clusters = argc > 3 ? std::atoi(argv[3]) : 20;
  const Instance in = Make(tasks, nodes, clusters);
  std::printf("mapping %d tasks onto %d nodes in %d clusters (%zu free)\n", tasks, nodes, clusters,
              in.platform.free_count());
  double et_maheve = 0, et_default = 0, et_qm = 0, et_fec = 0;
  const double maheve = Seconds(**mapping::MakeMapper("maheve"), in, et_maheve);
  const double dflt = Seconds(**mapping::MakeMapper("default"), in, et_default);
  const double qm = Seconds(**mapping::MakeMapper("aiac-qm"), in, et_qm);
  const double fec = Seconds(**mapping::MakeMapper("f-ec"), in, et_fec);
  std::printf("%-8s %8.4f s  ET(App) %10.3f\n", "maheve", maheve, et_maheve);
  std::printf("%-8s %8.4f s  ET(App) %10.3f\n", "default", dflt, et_default);
  std::printf("%-8s %8.4f s  ET(App) %10.3f\n", "aiac-qm", qm, et_qm);
  std::printf("%-8s %8.4f s  ET(App) %10.3f\n", "f-ec", fec, et_fec);
  std::printf(
      "maheve time / default time: %.1fx; maheve time / aiac-qm time: %.2fx; target: maheve under "
      "1 s (%s)\n",
      maheve / dflt, maheve / qm, maheve < 1.0 ? "met" : "missed");
  std::printf("predicted ET(App) default / maheve: %.2fx\n", et_default / et_maheve);
  return 0;
}
