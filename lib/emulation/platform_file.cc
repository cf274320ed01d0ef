#include "emulation/platform_file.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "core/config.h"
#include "core/names.h"
#include "core/read_file.h"

namespace aiac::emulation {

namespace {

// Reads one table's keys, refusing unknown ones and wrong types, naming `where`.
class Fields {
 public:
  Fields(const toml::table& t, std::string where) : t_(t), where_(std::move(where)) {}

  Status Text(const char* key, std::string& out, bool required = true) {
    seen_.insert(key);
    const toml::node* n = t_.get(key);
    if (!n) return required ? Missing(key) : Status::Ok();
    auto v = n->value<std::string>();
    if (!v || v->empty())
      return InvalidArgument(where_ + ": '" + key + "' must be a non-empty string");
    out = *v;
    return Status::Ok();
  }
  // A finite number in [lo, hi] (lo excluded when `open`).
  Status Number(const char* key, double& out, double lo, double hi, bool open,
                bool required = true) {
    seen_.insert(key);
    const toml::node* n = t_.get(key);
    if (!n) return required ? Missing(key) : Status::Ok();
    auto v = n->value<double>();
    if (!v || !std::isfinite(*v) || *v < lo || (open && *v == lo) || *v > hi) {
      return InvalidArgument(where_ + ": '" + key + "' must be a number " +
                             (open ? "above " : "from ") + Format(lo) + " to " + Format(hi));
    }
    out = *v;
    return Status::Ok();
  }
  const toml::node* Get(const char* key) {
    seen_.insert(key);
    return t_.get(key);
  }
  Status NoOthers() {
    for (const auto& [k, v] : t_) {
      if (!seen_.count(std::string(k.str())))
        return InvalidArgument(where_ + ": unknown key '" + std::string(k.str()) + "'");
    }
    return Status::Ok();
  }
  const std::string& where() const { return where_; }

 private:
  Status Missing(const char* key) { return InvalidArgument(where_ + ": '" + key + "' is missing"); }
  static std::string Format(double v) {
    char s[32];
    std::snprintf(s, sizeof s, "%g", v);
    return s;
  }
  const toml::table& t_;
  std::string where_;
  std::set<std::string> seen_;
};

constexpr double kMaxPower = 1e6, kMaxLatencyMs = 1e6, kMaxBandwidthMbps = 1e7, kMaxJobs = 1e3;

Status ReadCluster(const toml::table& t, const std::string& where, PlatformFile::Cluster& c) {
  Fields f(t, where);
  AIAC_RETURN_IF_ERROR(f.Text("name", c.name));
  const toml::node* powers = f.Get("powers");
  const toml::array* list = powers ? powers->as_array() : nullptr;
  if (!list || list->empty())
    return InvalidArgument(where + ": 'powers' must be a non-empty array of numbers");
  for (size_t k = 0; k < list->size(); ++k) {
    auto v = (*list)[k].value<double>();
    if (!v || !std::isfinite(*v) || *v <= 0 || *v > kMaxPower) {
      return InvalidArgument(where + ": powers[" + std::to_string(k) +
                             "] must be a positive number");
    }
    c.powers.push_back(*v);
  }
  AIAC_RETURN_IF_ERROR(f.Number("latency_ms", c.latency_ms, 0, kMaxLatencyMs, false));
  AIAC_RETURN_IF_ERROR(f.Number("bandwidth_mbps", c.bandwidth_mbps, 0, kMaxBandwidthMbps, true));
  if (const toml::node* b = f.Get("background")) {
    const toml::table* bt = b->as_table();
    if (!bt)
      return InvalidArgument(where +
                             ": 'background' must be a table {mean_jobs, std_jobs, mean_size}");
    Fields bf(*bt, where + ": background");
    BackgroundSpec spec;
    AIAC_RETURN_IF_ERROR(bf.Number("mean_jobs", spec.mean_jobs, 0, kMaxJobs, false));
    AIAC_RETURN_IF_ERROR(bf.Number("std_jobs", spec.std_jobs, 0, kMaxJobs, false, false));
    AIAC_RETURN_IF_ERROR(bf.Number("mean_size", spec.mean_size, 0, 1e6, true, false));
    AIAC_RETURN_IF_ERROR(bf.NoOthers());
    c.background = spec;
  }
  return f.NoOthers();
}

Result<model::Platform> ModelOf(const PlatformFile& p) {
  std::vector<model::ClusterSpec> specs;
  for (const auto& c : p.clusters) {
    model::ClusterSpec s{c.name, c.latency_ms / 1000, {}};
    for (size_t k = 0; k < c.powers.size(); ++k)
      s.nodes.push_back({PlatformFile::NodeId(c.name, k + 1), c.powers[k], true});
    specs.push_back(std::move(s));
  }
  std::vector<model::InterLatency> inter;
  for (const auto& l : p.links) inter.push_back({l.a, l.b, l.latency_ms / 1000});
  return model::Platform::Build(std::move(specs), std::move(inter));
}

}  // namespace

size_t PlatformFile::node_count() const {
  size_t n = 0;
  for (const auto& c : clusters) n += c.powers.size();
  return n;
}

std::string PlatformFile::NodeId(const std::string& cluster, size_t k) {
  return std::string(cluster).append("-").append(std::to_string(k));
}

PlatformFile::Link PlatformFile::Between(const std::string& a, const std::string& b) const {
  if (a == b) {
    for (const auto& c : clusters) {
      if (c.name == a) return {a, b, c.latency_ms, c.bandwidth_mbps};
    }
  }
  for (const auto& l : links) {
    if ((l.a == a && l.b == b) || (l.a == b && l.b == a)) return l;
  }
  return {a, b, 0, 0};  // (a checked file has every pair)
}

double PlatformFile::HeterogeneityDegree() const {
  double sum = 0, squares = 0;
  const auto n = static_cast<double>(node_count());
  for (const auto& c : clusters) {
    for (double p : c.powers) sum += p;
  }
  const double mean = sum / n;
  for (const auto& c : clusters) {
    for (double p : c.powers) squares += (p - mean) * (p - mean);
  }
  return std::sqrt(squares / n) / mean;
}

model::Platform PlatformFile::ToModel() const {
  return std::move(*ModelOf(*this));  // a checked file always builds
}

Result<PlatformFile> ParsePlatformFile(std::string_view text, const std::string& name) {
  AIAC_ASSIGN_OR_RETURN(auto table, ParseTomlText(text, name));
  PlatformFile p;
  Fields top(table, name);
  AIAC_RETURN_IF_ERROR(top.Text("name", p.name));
  const toml::node* clusters = top.Get("clusters");
  const toml::array* cs = clusters ? clusters->as_array() : nullptr;
  if (!cs || cs->empty()) return InvalidArgument(name + ": at least one [[clusters]] is needed");
  std::set<std::string> names;
  for (size_t i = 0; i < cs->size(); ++i) {
    const std::string where = name + ": clusters[" + std::to_string(i) + "]";
    const toml::table* t = (*cs)[i].as_table();
    if (!t) return InvalidArgument(where + " must be a table");
    PlatformFile::Cluster c;
    AIAC_RETURN_IF_ERROR(ReadCluster(*t, where, c));
    // Cluster names go to daemons (--cluster) and, in node ids, everywhere a name goes.
    if (Status ok = CheckName("cluster name", c.name); !ok.ok())
      return InvalidArgument(where + ": " + ok.message());
    if (!names.insert(c.name).second)
      return InvalidArgument(where + ": duplicate cluster name '" + c.name + "'");
    p.clusters.push_back(std::move(c));
  }
  std::set<std::pair<std::string, std::string>> pairs;
  if (const toml::node* links = top.Get("links")) {
    const toml::array* ls = links->as_array();
    if (!ls) return InvalidArgument(name + ": 'links' must be an array of tables ([[links]])");
    for (size_t i = 0; i < ls->size(); ++i) {
      const std::string where = name + ": links[" + std::to_string(i) + "]";
      const toml::table* t = (*ls)[i].as_table();
      if (!t) return InvalidArgument(where + " must be a table");
      Fields f(*t, where);
      PlatformFile::Link l;
      AIAC_RETURN_IF_ERROR(f.Text("a", l.a));
      AIAC_RETURN_IF_ERROR(f.Text("b", l.b));
      AIAC_RETURN_IF_ERROR(f.Number("latency_ms", l.latency_ms, 0, kMaxLatencyMs, false));
      AIAC_RETURN_IF_ERROR(
          f.Number("bandwidth_mbps", l.bandwidth_mbps, 0, kMaxBandwidthMbps, true));
      AIAC_RETURN_IF_ERROR(f.NoOthers());
      for (const auto& end : {l.a, l.b}) {
        if (!names.count(end)) return InvalidArgument(where + ": unknown cluster '" + end + "'");
      }
      if (l.a == l.b) return InvalidArgument(where + ": a link joins two different clusters");
      if (!pairs.insert({std::min(l.a, l.b), std::max(l.a, l.b)}).second) {
        return InvalidArgument(where + ": a second link between '" + l.a + "' and '" + l.b + "'");
      }
      p.links.push_back(std::move(l));
    }
  }
  AIAC_RETURN_IF_ERROR(top.NoOthers());
  for (auto a = names.begin(); a != names.end(); ++a) {
    for (auto b = std::next(a); b != names.end(); ++b) {
      if (!pairs.count({*a, *b}))
        return InvalidArgument(name + ": no [[links]] between '" + *a + "' and '" + *b + "'");
    }
  }
  if (auto built = ModelOf(p); !built.ok())
    return InvalidArgument(name + ": " + built.status().message());
  return p;
}

Result<PlatformFile> LoadPlatformFile(const std::string& path) {
  AIAC_ASSIGN_OR_RETURN(auto text, ReadWholeFile(path));
  return ParsePlatformFile(text, path);
}

}  // namespace aiac::emulation
