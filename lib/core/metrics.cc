#include "core/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace aiac::metrics {
namespace {

// Backslash and newline escaped, and with `quote` the double quote too: label values escape
// all three, help texts the first two.
std::string Escape(std::string_view text, bool quote = true) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"' && quote) {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

// Go's strconv 'g' format as Prometheus reads it: integers plainly, "+Inf", "NaN".
std::string Number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// `labels` with `le` added last, for a histogram bucket.
std::string WithLe(const std::string& rendered, const std::string& le) {
  const std::string pair = "le=\"" + le + "\"";
  if (rendered.empty()) return "{" + pair + "}";
  return rendered.substr(0, rendered.size() - 1) + "," + pair + "}";
}

const char* TypeName(int type) {
  switch (type) {
    case 0:
      return "counter";
    case 1:
      return "gauge";
    default:
      return "histogram";
  }
}

}  // namespace

std::string RenderLabels(const Labels& labels) {
  if (labels.empty()) return "";
  std::string out = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i) out += ',';
    out += labels[i].first + "=\"" + Escape(labels[i].second) + "\"";
  }
  return out + "}";
}

Histogram::Histogram(std::vector<double> upper_bounds) : bounds_(std::move(upper_bounds)) {
  std::sort(bounds_.begin(), bounds_.end());
  buckets_ = std::make_unique<std::atomic<uint64_t>[]>(bounds_.size() + 1);
}

void Histogram::Observe(double v) {
  const size_t i =
      static_cast<size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin());
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(v, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
}

Histogram::Snapshot Histogram::Read() const {
  Snapshot s;
  s.upper_bounds = bounds_;
  uint64_t running = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    running += buckets_[i].load(std::memory_order_relaxed);
    s.cumulative.push_back(running);
  }
  // The +Inf bucket is the count, by definition; read concurrently, take the buckets' total.
  s.count = running;
  s.sum = sum_.load(std::memory_order_relaxed);
  return s;
}

std::vector<double> DefaultSecondsBuckets() {
  return {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

Registry& Registry::Process() {
  static Registry* registry = new Registry();  // never destroyed: metrics outlive every thread
  return *registry;
}

Registry::Family& Registry::FamilyOf(std::string_view name, std::string_view help, Type type) {
  auto it = families_.find(name);
  if (it == families_.end()) {
    it =
        families_.emplace(std::string(name), Family{type, std::string(help), {}, {}, {}, {}}).first;
  }
  if (it->second.type != type) {
    std::fprintf(stderr, "metric %s registered with two types\n", std::string(name).c_str());
    std::abort();
  }
  return it->second;
}

Counter& Registry::GetCounter(std::string_view name, std::string_view help, const Labels& labels) {
  std::lock_guard lock(mu_);
  auto& slot = FamilyOf(name, help, Type::kCounter).counters[RenderLabels(labels)];
  if (!slot) slot = std::make_unique<Counter>();
  return *slot;
}

Gauge& Registry::GetGauge(std::string_view name, std::string_view help, const Labels& labels) {
  std::lock_guard lock(mu_);
  auto& slot = FamilyOf(name, help, Type::kGauge).gauges[RenderLabels(labels)];
  if (!slot) slot = std::make_unique<Gauge>();
  return *slot;
}

Histogram& Registry::GetHistogram(std::string_view name, std::string_view help,
                                  std::vector<double> upper_bounds) {
  std::lock_guard lock(mu_);
  auto& family = FamilyOf(name, help, Type::kHistogram);
  if (!family.histogram) family.histogram = std::make_unique<Histogram>(std::move(upper_bounds));
  return *family.histogram;
}

Registry::Collector Registry::AddGaugeCollector(std::string name, std::string help,
                                                std::function<Samples()> collect) {
  std::lock_guard lock(mu_);
  FamilyOf(name, help, Type::kGauge).collect = std::move(collect);
  return Collector(this, std::move(name));
}

Registry::Collector& Registry::Collector::operator=(Collector&& other) noexcept {
  if (this != &other) {
    this->~Collector();
    registry_ = std::exchange(other.registry_, nullptr);
    name_ = std::move(other.name_);
  }
  return *this;
}

Registry::Collector::~Collector() {
  if (!registry_) return;
  std::lock_guard lock(registry_->mu_);
  auto it = registry_->families_.find(name_);
  if (it != registry_->families_.end()) it->second.collect = nullptr;
  registry_ = nullptr;
}

std::string Registry::Text() const {
  // Collectors run outside the lock: one may take a while, and registering from it must not
  // deadlock. Copy them out first.
  std::vector<std::pair<std::string, std::function<Samples()>>> collectors;
  {
    std::lock_guard lock(mu_);
    for (const auto& [name, f] : families_) {
      if (f.collect) collectors.emplace_back(name, f.collect);
    }
  }
  std::map<std::string, Samples, std::less<>> collected;
  for (auto& [name, collect] : collectors) collected[name] = collect();

  std::lock_guard lock(mu_);
  std::string out;
  for (const auto& [name, f] : families_) {
    auto got = collected.find(name);
    const bool any =
        !f.counters.empty() || !f.gauges.empty() || f.histogram || (got != collected.end());
    if (!any) continue;
    out += "# HELP " + name + " " + Escape(f.help, /*quote=*/false) + "\n";
    out += "# TYPE " + name + " " + TypeName(static_cast<int>(f.type)) + "\n";
    for (const auto& [labels, c] : f.counters) {
      out += name + labels + " " + std::to_string(c->value()) + "\n";
    }
    for (const auto& [labels, g] : f.gauges) {
      out += name + labels + " " + Number(g->value()) + "\n";
    }
    if (got != collected.end()) {
      for (const auto& [labels, v] : got->second) {
        out += name + RenderLabels(labels) + " " + Number(v) + "\n";
      }
    }
    if (f.histogram) {
      const auto s = f.histogram->Read();
      for (size_t i = 0; i < s.upper_bounds.size(); ++i) {
        out += name + "_bucket" + WithLe("", Number(s.upper_bounds[i])) + " " +
               std::to_string(s.cumulative[i]) + "\n";
      }
      out += name + "_bucket" + WithLe("", "+Inf") + " " + std::to_string(s.count) + "\n";
      out += name + "_sum " + Number(s.sum) + "\n";
      out += name + "_count " + std::to_string(s.count) + "\n";
    }
  }
  return out;
}

}  // namespace aiac::metrics
