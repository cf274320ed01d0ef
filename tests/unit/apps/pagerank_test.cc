// The PageRank example app (examples/pagerank/pagerank.cc, built into this test): its graph
// input, bad input, and its ranks against a dense power iteration on small graphs, run in one
// process with app::RunLocally (asynchronous with delays and restores, and synchronous).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <memory>
#include <random>

#include "app/local_run.h"
#include "support/test_support.h"

extern "C" aiac::app::App* aiac_app_create();

namespace aiac::testing {
namespace {

std::unique_ptr<app::App> NewApp() { return std::unique_ptr<app::App>(aiac_app_create()); }

class PageRankTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& text) {
    WriteFile(dir_.path() + "/" + name, text);
    return name;
  }
  // Prepare's error (or "ok: NOTE") for these params.
  std::string Prepare(std::map<std::string, std::string> values, uint32_t tasks = 2) {
    app::JobParams p;
    p.values = std::move(values);
    p.tasks = tasks;
    p.base_dir = dir_.path();
    auto app = NewApp();
    auto plan = app->Prepare(p);
    return plan.ok() ? "ok: " + plan->notes.front() : plan.status().message();
  }
  TempDir dir_;
};

TEST_F(PageRankTest, SelfLoopsAndRepeatedLinksAreDroppedAndIdsMayBeDeclared) {
  Write("g.edges", "# a comment\n\n0 0\n0 1\n0 1\n1 0\n  2\t1  \n");
  EXPECT_EQ(Prepare({{"graph", "g.edges"}}),
            "ok: pagerank: 3 nodes, 3 links (self loops and repeats dropped)");
  EXPECT_EQ(Prepare({{"graph", "g.edges"}, {"nodes", "10"}}),
            "ok: pagerank: 10 nodes, 3 links (self loops and repeats dropped)");
  Write("s.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1\n3 2\n");
  EXPECT_EQ(Prepare({{"graph", "s.mtx"}}),
            "ok: pagerank: 3 nodes, 4 links (self loops and repeats dropped)");
}

TEST_F(PageRankTest, BadGraphsAndParametersAreOneLineErrors) {
  const auto has = [&](std::map<std::string, std::string> values, const std::string& what) {
    const std::string got = Prepare(std::move(values));
    EXPECT_NE(got.find(what), std::string::npos) << got;
    EXPECT_EQ(got.find('\n'), std::string::npos) << got;
  };
  has({{"graph", Write("a", "0 1\n1 x\n")}}, "a:2: 'x' is not a node id");
  has({{"graph", Write("b", "0 1 2\n")}}, "b:1: expected 'src dst'");
  has({{"graph", Write("c", "-1 2\n")}}, "c:1: '-1' is not a node id");
  has({{"graph", Write("d", "0 1\n5 1\n")}, {"nodes", "4"}},
      "d:2: node 5 is beyond params.nodes = 4");
  has({{"graph", Write("e", "# nothing\n\n")}}, "holds no node");
  has({{"graph", "missing.edges"}}, "cannot read params.graph");
  has({{"graph", Write("f.mtx", "%%MatrixMarket matrix array real general\n2 1\n1\n2\n")}},
      "a graph is a coordinate matrix");
  has({{"graph", Write("g.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n3 1\n")}},
      "is outside the 2 x 2 matrix");
  has({{"graph", Write("h.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 3 1\n1 1\n")}},
      "a link matrix is square");
  has({{"graph", Write("i.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n")}},
      "1 entries, the header says 2");
  has({{"graph", "a"}, {"rmat_scale", "4"}}, "either params.graph or params.rmat_scale");
  has({{"rmat_scale", "4"}, {"damping", "1.5"}}, "params.damping must be a number in 0.01..0.99");
  has({{"rmat_scale", "4"}, {"dampnig", "0.5"}}, "unknown parameter params.dampnig");
  Write("j", "0 1\n");
  EXPECT_EQ(Prepare({{"graph", "j"}}, 3), "pagerank: 2 nodes for 3 tasks");
}

// x = d P^T x + (d D + 1 - d) / n by a dense power iteration, normalized.
std::vector<double> Dense(int n, const std::vector<std::pair<int, int>>& links, double d) {
  std::vector<int> out(n, 0);
  for (auto [s, t] : links) ++out[s];
  std::vector<double> x(n, 1.0 / n), y(n);
  for (int it = 0; it < 2000; ++it) {
    double dangling = 0;
    for (int i = 0; i < n; ++i) dangling += out[i] == 0 ? x[i] : 0;
    std::fill(y.begin(), y.end(), (d * dangling + 1 - d) / n);
    for (auto [s, t] : links) y[t] += d * x[s] / out[s];
    x.swap(y);
  }
  double sum = 0;
  for (double v : x) sum += v;
  for (double& v : x) v /= sum;
  return x;
}

std::vector<double> ReadRanks(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::vector<double> x;
  int header = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '%') continue;
    if (header++ == 0) continue;
    x.push_back(std::stod(line));
  }
  return x;
}

TEST_F(PageRankTest, RanksMatchADensePowerIterationAsyncSyncAndRestored) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 6; ++trial) {
    const int n = 20 + trial * 7;
    std::vector<std::pair<int, int>> links;
    std::string text;
    for (int s = 0; s < n; ++s) {
      if (s % 5 == 3) continue;  // dangling
      for (int k = 0; k < 1 + static_cast<int>(rng() % 4); ++k) {
        const int t = static_cast<int>(rng() % n);
        if (t == s) continue;
        if (std::find(links.begin(), links.end(), std::pair(s, t)) != links.end()) continue;
        links.emplace_back(s, t);
        text += std::to_string(s) + " " + std::to_string(t) + "\n";
      }
    }
    Write("g.edges", text);
    const double damping = trial % 2 ? 0.85 : 0.6;
    const std::vector<double> exact = Dense(n, links, damping);
    for (int mode = 0; mode < 3; ++mode) {
      app::LocalRunOptions o;
      o.tasks = 1 + static_cast<uint32_t>(trial % 5);
      o.base_dir = dir_.path();
      o.params = {{"graph", "g.edges"},
                  {"nodes", std::to_string(n)},
                  {"damping", std::to_string(damping)},
                  {"tolerance", "1e-13"},
                  {"output", "ranks.mtx"}};
      o.sync = mode == 1;
      o.restore_every = mode == 2 ? 3 : 0;
      o.seed = static_cast<uint64_t>(trial + 1);
      o.log = [](app::LogLevel, std::string_view) {};
      auto app = NewApp();
      auto run = app::RunLocally(*app, o);
      ASSERT_TRUE(run.ok()) << run.status().message();
      ASSERT_EQ(run->report.status, app::GatherStatus::kConverged) << run->report.error;
      const std::vector<double> x = ReadRanks(dir_.path() + "/ranks.mtx");
      ASSERT_EQ(x.size(), exact.size());
      double distance = 0;
      for (int i = 0; i < n; ++i) distance += std::abs(x[i] - exact[i]);
      EXPECT_LT(distance, 1e-9) << "trial " << trial << " mode " << mode;
    }
  }
}

}  // namespace
}  // namespace aiac::testing
