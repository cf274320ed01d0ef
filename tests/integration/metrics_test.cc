// `--metrics` and the super-node's web page, as an operator uses them: Prometheus pages scraped
// from every process during a run with a failure and checked against the run's summary, clients
// that sit idle or send a huge header while the registry keeps serving, and the page loaded in
// a real browser (headless Chromium).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio.hpp>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>

#include "cluster_fixture.h"
#include "support/http_client.h"

namespace aiac::testing {
namespace {

class MetricsTest : public ClusterFixture {
 protected:
  std::string Scrape(const std::string& address) {
    const HttpReply r = HttpGet(address, "/metrics");
    return r.status == 200 ? r.body : "";
  }
  static double Value(const std::string& page, const std::string& key) {
    return MetricValue(page, key);
  }
};

// A job on two of three hand-started daemons; one of its daemons is lost and its task resumes on
// the third. The spawner's failures, replacements and resume time are the summary's; the
// daemons' iterations cover what the summary says each task computed; the super-node counts the
// job and its busy daemons while it runs.
TEST_F(MetricsTest, ScrapedDuringARunWithAFailureTheyAgreeWithTheSummary) {
  WriteFile(dir_ / "sn.toml", ReadFile(dir_ / "key.toml") + "digest_interval_ms = 200\n");
  const std::string sn =
      StartSupernode("sn-a", {"--metrics", "127.0.0.1:0"}, "127.0.0.1:0", "sn.toml");
  const std::string sn_metrics = MetricsAddress("sn-a");
  std::map<std::string, std::string> daemon_metrics;
  for (const char* d : {"d1", "d2", "d3"}) {
    StartDaemon(d, {sn}, "key.toml", "1", {"--metrics", "127.0.0.1:0"});
    daemon_metrics[d] = MetricsAddress(d);
  }
  ASSERT_TRUE(WaitUntil([&] {
    return Value(Scrape(sn_metrics), "aiac_daemons{state=\"free\"}") == 3;
  })) << Scrape(sn_metrics);

  WriteFile(dir_ / "spawner.toml", ReadFile(dir_ / "key.toml") + "spares = 1\n");
  WriteJob("long.toml",
           "name = \"long\"\napp = \"synthetic\"\ntasks = 2\ntimeout_s = 600\n"
           "checkpoint_seconds = 0.2\n[params]\nitems = 2000\niterations = 1000000\n"
           "base_cost = 2000\n");
  auto spawner = Start(
      "aiac-spawner",
      {"run", "--config", dir_ / "spawner.toml", "--supernode", sn, dir_ / "long.toml", "--json",
       dir_ / "long.json", "--metrics", "127.0.0.1:0", "--kill-every", "0.5", "--kill-count", "1"},
      dir_ / "spawner.log");
  const std::string spawner_metrics = MetricsAddress("spawner");

  // While it runs: the super-node counts the job and its two busy daemons.
  std::string page;
  ASSERT_TRUE(WaitUntil(
      [&] {
        page = Scrape(sn_metrics);
        return Value(page, "aiac_jobs") == 1 && Value(page, "aiac_daemons{state=\"busy\"}") == 2;
      },
      std::chrono::seconds(120)))
      << page << Log("spawner");
  EXPECT_GE(Value(page, "aiac_connections_open"), 3) << page;
  EXPECT_GT(Value(page, "aiac_frames_total{direction=\"received\"}"), 0) << page;
  EXPECT_GT(Value(page, "aiac_bytes_total{direction=\"sent\"}"), 0) << page;

  // The loss, detected and repaired: the task runs again on the spare.
  ASSERT_TRUE(WaitUntil(
      [&] {
        page = Scrape(spawner_metrics);
        return Value(page, "aiac_resume_seconds_count") == 1;
      },
      std::chrono::seconds(120)))
      << page << Log("spawner");
  const std::string seen = page;
  // And computes there: the daemon that took the task over has iterated past its checkpoint, so
  // both live daemons count iterations (the lost one answers no scrape).
  ASSERT_TRUE(WaitUntil(
      [&] {
        int computing = 0;
        for (const auto& [d, at] : daemon_metrics) {
          computing += Value(Scrape(at), "aiac_task_iterations_total") > 0 ? 1 : 0;
        }
        return computing == 2;
      },
      std::chrono::seconds(120)))
      << Log("spawner");

  // Stopped as Ctrl-C would: the summary is written.
  spawner.Signal(SIGINT);
  auto code = spawner.WaitFor(std::chrono::seconds(120));
  ASSERT_TRUE(code.has_value()) << Log("spawner");
  const nlohmann::json summary = Json("long.json");
  ASSERT_TRUE(summary.is_object()) << Log("spawner");
  ASSERT_EQ(summary["replacements"].size(), 1u) << summary.dump(2);
  EXPECT_EQ(Value(seen, "aiac_failures_detected_total"), summary["failures"].get<double>());
  EXPECT_EQ(Value(seen, "aiac_replacements_total"), 1);
  EXPECT_NEAR(Value(seen, "aiac_resume_seconds_sum"),
              summary["replacements"][0]["seconds_to_resume"].get<double>(), 1e-6);
  EXPECT_EQ(Value(seen, "aiac_items_moved_total"),
            summary["balancing"]["items_moved"].get<double>())
      << seen;

  // Each surviving daemon computed at least what the summary says its task reached (from its
  // checkpoint, for the one that took over), and stored checkpoint copies, each one timed.
  const std::string failed = summary["replacements"][0]["failed"];
  const auto restored = summary["replacements"][0]["restored_iteration"].get<double>();
  const std::string taker = summary["replacements"][0]["daemon"];
  double copies = 0;
  for (const auto& t : summary["per_task"]) {
    const std::string d = t["daemon"];
    ASSERT_NE(d, failed);
    const std::string daemon_page = Scrape(daemon_metrics.at(d));
    const double computed = Value(daemon_page, "aiac_task_iterations_total");
    const double reached = t["iterations"].get<double>() - (d == taker ? restored : 0);
    EXPECT_GE(computed, reached) << d << "\n" << daemon_page;
    EXPECT_GT(computed, 0) << daemon_page;
    copies += Value(daemon_page, "aiac_checkpoints_written_total");
    EXPECT_EQ(Value(daemon_page, "aiac_checkpoint_write_seconds_count"),
              Value(daemon_page, "aiac_checkpoints_written_total"));
  }
  EXPECT_GT(copies, 0);

  // Once it ended, the super-node has no job and no busy daemon.
  ASSERT_TRUE(WaitUntil([&] {
    page = Scrape(sn_metrics);
    return Value(page, "aiac_jobs") == 0 && Value(page, "aiac_daemons{state=\"busy\"}") == 0;
  })) << page;
  // A status asked with another cluster key is a failed handshake, counted by its reason.
  EXPECT_EQ(RunSpawner({"status", "--config", dir_ / "wrong.toml", "--supernode", sn}, "wrong"), 1);
  ASSERT_TRUE(WaitUntil([&] {
    return Value(Scrape(sn_metrics), "aiac_handshake_failures_total{reason=\"tls\"}") >= 1;
  })) << Scrape(sn_metrics);
}

// 200 clients that connect and say nothing, and one that sends a 1 MB request header: the page
// keeps answering, the big header is refused, and daemons register and heartbeat meanwhile.
TEST_F(MetricsTest, IdleAndHostileHttpClientsDoNotStallTheRegistry) {
  WriteFile(dir_ / "sn.toml", ReadFile(dir_ / "key.toml") + "failure_timeout_ms = 2000\n");
  const std::string sn =
      StartSupernode("sn-a", {"--metrics", "127.0.0.1:0"}, "127.0.0.1:0", "sn.toml");
  const std::string web = MetricsAddress("sn-a");
  const size_t colon = web.rfind(':');
  boost::asio::io_context io;
  const boost::asio::ip::tcp::endpoint at(
      boost::asio::ip::make_address(web.substr(0, colon)),
      static_cast<unsigned short>(std::stoi(web.substr(colon + 1))));
  std::vector<boost::asio::ip::tcp::socket> idle;
  for (int i = 0; i < 200; ++i) {
    idle.emplace_back(io);
    idle.back().connect(at);
  }
  // One request header of 1 MB: answered 431 (or cut) and closed, never taken in whole.
  std::thread hostile([&] {
    boost::asio::ip::tcp::socket s(io);
    boost::system::error_code ec;
    s.connect(at, ec);
    std::string request =
        "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(1 << 20, 'a') + "\r\n\r\n";
    boost::asio::write(s, boost::asio::buffer(request), ec);
    std::array<char, 256> answer{};
    const size_t n = s.read_some(boost::asio::buffer(answer), ec);
    if (n > 0) {
      EXPECT_NE(std::string(answer.data(), n).find(" 431 "), std::string::npos);
    }
  });
  for (const char* d : {"d1", "d2"}) StartDaemon(d, {sn});
  std::string page;
  ASSERT_TRUE(WaitUntil([&] {
    page = HttpGet(web, "/metrics").body;
    return Value(page, "aiac_daemons{state=\"free\"}") == 2;
  })) << page
      << Log("sn-a");
  hostile.join();
  // Their heartbeats keep coming in (frames the super-node reads) while the 200 sit there, and
  // both are still registered, free.
  const double frames = Value(page, "aiac_frames_total{direction=\"received\"}");
  ASSERT_TRUE(WaitUntil([&] {
    page = HttpGet(web, "/metrics").body;
    return Value(page, "aiac_frames_total{direction=\"received\"}") >= frames + 10;
  })) << page;
  std::string out;
  ASSERT_EQ(Ask({"status", "--supernode", sn, "--json"}, out), 0) << out;
  EXPECT_EQ(nlohmann::json::parse(out)["daemons"].size(), 2u) << out;
  const HttpReply status = HttpGet(web, "/api/status");
  EXPECT_EQ(status.status, 200u);
  EXPECT_EQ(status.content_type, "application/json");
  EXPECT_EQ(HttpGet(web, "/nothing").status, 404u);
  EXPECT_EQ(HttpGet(web, "/api/history?job=none").status, 404u);
  for (auto& s : idle) s.close();
}

// The page in a real browser: it lists the daemons and draws the running job's chart.
TEST_F(MetricsTest, TheWebPageShowsTheDaemonsAndDrawsTheJobInChromium) {
  const std::string chromium = "/usr/bin/chromium";
  if (access(chromium.c_str(), X_OK) != 0) {
    GTEST_SKIP() << "no " << chromium << " (conf/bootstrap.sh installs Debian's chromium)";
  }
  WriteFile(dir_ / "sn.toml", ReadFile(dir_ / "key.toml") + "digest_interval_ms = 200\n");
  const std::string sn =
      StartSupernode("sn-a", {"--metrics", "127.0.0.1:0"}, "127.0.0.1:0", "sn.toml");
  const std::string web = MetricsAddress("sn-a");
  for (const char* d : {"d1", "d2"}) StartDaemon(d, {sn});
  WriteJob("long.toml",
           "name = \"long\"\napp = \"synthetic\"\ntasks = 2\ntimeout_s = 600\n[params]\n"
           "items = 2000\niterations = 1000000\nbase_cost = 2000\n");
  auto spawner = Start(
      "aiac-spawner", {"run", "--config", dir_ / "key.toml", "--supernode", sn, dir_ / "long.toml"},
      dir_ / "spawner.log");
  // The job's course has a few points per task.
  std::string job;
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto status = nlohmann::json::parse(HttpGet(web, "/api/status").body, nullptr, false);
        if (!status.is_object() || status["jobs"].empty()) return false;
        job = status["jobs"][0]["id"];
        auto course =
            nlohmann::json::parse(HttpGet(web, "/api/history?job=" + job).body, nullptr, false);
        if (!course.is_object() || course["tasks"].size() != 2) return false;
        for (const auto& t : course["tasks"]) {
          if (t["points"].size() < 3) return false;
        }
        return true;
      },
      std::chrono::seconds(120)))
      << Log("spawner");

  std::filesystem::create_directories(dir_ / "chromium");
  auto browser = spawner::ChildProcess::Spawn(
      {chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
       "--user-data-dir=" + (dir_ / "chromium"), "--virtual-time-budget=5000", "--dump-dom",
       "http://" + web + "/"},
      dir_ / "dom.html");
  ASSERT_TRUE(browser.ok()) << browser.status().message();
  auto ended = browser->WaitFor(std::chrono::seconds(120));
  ASSERT_TRUE(ended.has_value());
  const std::string dom = ReadFile(dir_ / "dom.html");
  EXPECT_NE(dom.find("<td>d1</td>"), std::string::npos) << dom;
  EXPECT_NE(dom.find("<td>d2</td>"), std::string::npos) << dom;
  EXPECT_NE(dom.find(job), std::string::npos) << dom;
  // One line per task, each through several points.
  const std::regex series(
      "<polyline class=\"series\" data-task=\"([01])\"[^>]* points=\"([^\"]+)\"");
  std::set<std::string> drawn;
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), series); it != std::sregex_iterator();
       ++it) {
    const std::string points = (*it)[2];
    if (std::count(points.begin(), points.end(), ',') >= 2) drawn.insert((*it)[1]);
  }
  EXPECT_EQ(drawn, (std::set<std::string>{"0", "1"})) << dom;
  spawner.Signal(SIGINT);
  EXPECT_TRUE(spawner.WaitFor(std::chrono::seconds(120)).has_value());
}

}  // namespace
}  // namespace aiac::testing
