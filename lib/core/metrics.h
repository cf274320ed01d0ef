// A process's Prometheus metrics (docs/operations.md, "Metrics"): counters, gauges and
// histograms, each in a family named once with its help text, and the text exposition format
// (version 0.0.4) that `/metrics` serves.
//
// Why our own and not prometheus-cpp: the metrics share one port with the super-node's web page
// and are served by the same Asio io_context as everything else (net/http_server.h), where
// prometheus-cpp's pull side brings its own civetweb server and threads; the registry and the
// format are a hundred lines.
//
// Thread-safety: every metric is updated with atomics from any thread (a daemon's tasks run on
// their own); registration and Text() take a mutex. A metric, once made, lives as long as the
// process: callers keep the reference.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aiac::metrics {

// Label name and value pairs, in the order given: {{"direction", "sent"}}.
using Labels = std::vector<std::pair<std::string, std::string>>;

class Counter {
 public:
  void Add(uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

class Gauge {
 public:
  void Set(double v) { value_.store(v, std::memory_order_relaxed); }
  void Add(double d) { value_.fetch_add(d, std::memory_order_relaxed); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

// Cumulative buckets: an observation counts in every bucket whose upper bound it does not pass.
class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds);
  void Observe(double v);

  struct Snapshot {
    std::vector<double> upper_bounds;
    std::vector<uint64_t> cumulative;  // per bound, then +Inf
    uint64_t count = 0;
    double sum = 0;
  };
  Snapshot Read() const;

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;  // per bound, then +Inf; not cumulative
  std::atomic<uint64_t> count_{0};
  std::atomic<double> sum_{0};
};

// Prometheus's default buckets (seconds): 5 ms .. 10 s.
std::vector<double> DefaultSecondsBuckets();

class Registry {
 public:
  // The process's registry, what `/metrics` serves.
  static Registry& Process();

  // The metric of family `name` with `labels`, made on first use. A name used with another type
  // is a programming error (aborts in every build: two subsystems would fight over the name).
  Counter& GetCounter(std::string_view name, std::string_view help, const Labels& labels = {});
  Gauge& GetGauge(std::string_view name, std::string_view help, const Labels& labels = {});
  Histogram& GetHistogram(std::string_view name, std::string_view help,
                          std::vector<double> upper_bounds = DefaultSecondsBuckets());

  // A gauge family whose samples are computed when scraped, by `collect`, on the thread that
  // calls Text() (a server's io thread: `collect` may read what that thread owns). Removed
  // when the returned handle is destroyed, so its owner must hold it.
  using Samples = std::vector<std::pair<Labels, double>>;
  class Collector {
   public:
    Collector() = default;
    Collector(Registry* registry, std::string name) : registry_(registry), name_(std::move(name)) {}
    Collector(Collector&& other) noexcept { *this = std::move(other); }
    Collector& operator=(Collector&& other) noexcept;
    ~Collector();

   private:
    Registry* registry_ = nullptr;
    std::string name_;
  };
  [[nodiscard]] Collector AddGaugeCollector(std::string name, std::string help,
                                            std::function<Samples()> collect);

  // Every family in name order, in the text exposition format.
  std::string Text() const;

 private:
  enum class Type { kCounter, kGauge, kHistogram };
  struct Family {
    Type type;
    std::string help;
    // Keyed by the rendered label set ("{a=\"b\"}" or ""), so samples print in a stable order.
    std::map<std::string, std::unique_ptr<Counter>> counters;
    std::map<std::string, std::unique_ptr<Gauge>> gauges;
    std::unique_ptr<Histogram> histogram;
    std::function<Samples()> collect;
  };
  Family& FamilyOf(std::string_view name, std::string_view help, Type type);

  mutable std::mutex mu_;
  std::map<std::string, Family, std::less<>> families_;
};

// `{a="b",c="d"}` with values escaped as the format requires; "" for no labels.
std::string RenderLabels(const Labels& labels);

}  // namespace aiac::metrics
