#include "core/metrics.h"

#include <gtest/gtest.h>

#include <thread>

namespace aiac::metrics {
namespace {

TEST(MetricsTest, CountersGaugesAndCollectorsInTheTextFormat) {
  Registry r;
  r.GetCounter("t_frames_total", "Frames", {{"direction", "sent"}}).Add(3);
  r.GetCounter("t_frames_total", "Frames", {{"direction", "received"}}).Add();
  // The same family and labels give the same counter.
  r.GetCounter("t_frames_total", "Frames", {{"direction", "sent"}}).Add(2);
  r.GetGauge("t_open", "Open now").Set(2.5);
  auto collector = r.AddGaugeCollector("t_daemons", "Daemons by state", [] {
    return Registry::Samples{{{{"state", "free"}}, 4}, {{{"state", "a\"b\\c\nd"}}, 1}};
  });
  EXPECT_EQ(r.Text(),
            "# HELP t_daemons Daemons by state\n"
            "# TYPE t_daemons gauge\n"
            "t_daemons{state=\"free\"} 4\n"
            "t_daemons{state=\"a\\\"b\\\\c\\nd\"} 1\n"
            "# HELP t_frames_total Frames\n"
            "# TYPE t_frames_total counter\n"
            "t_frames_total{direction=\"received\"} 1\n"
            "t_frames_total{direction=\"sent\"} 5\n"
            "# HELP t_open Open now\n"
            "# TYPE t_open gauge\n"
            "t_open 2.5\n");
  // A collector's family goes with its handle.
  collector = Registry::Collector();
  EXPECT_EQ(r.Text().find("t_daemons"), std::string::npos);
}

TEST(MetricsTest, HistogramBucketsAreCumulativeWithSumAndCount) {
  Registry r;
  Histogram& h = r.GetHistogram("t_seconds", "Durations", {0.1, 1});
  h.Observe(0.05);
  h.Observe(0.1);  // on a bound: counts in it
  h.Observe(0.5);
  h.Observe(7);
  EXPECT_EQ(r.Text(),
            "# HELP t_seconds Durations\n"
            "# TYPE t_seconds histogram\n"
            "t_seconds_bucket{le=\"0.10000000000000001\"} 2\n"
            "t_seconds_bucket{le=\"1\"} 3\n"
            "t_seconds_bucket{le=\"+Inf\"} 4\n"
            "t_seconds_sum 7.6500000000000004\n"
            "t_seconds_count 4\n");
}

TEST(MetricsTest, UpdatesFromManyThreadsAreAllCounted) {
  Registry r;
  Counter& c = r.GetCounter("t_total", "Total");
  Histogram& h = r.GetHistogram("t_h", "H", {1});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        c.Add();
        h.Observe(0.5);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(c.value(), 40000u);
  EXPECT_EQ(h.Read().count, 40000u);
  EXPECT_DOUBLE_EQ(h.Read().sum, 20000);
}

TEST(MetricsTest, AFamilyWithNoSampleIsNotPrinted) {
  Registry r;
  EXPECT_EQ(r.Text(), "");
}

}  // namespace
}  // namespace aiac::metrics
