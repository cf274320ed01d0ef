#include "monitor/power_cache.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/atomic_file.h"

namespace aiac::monitor {

std::optional<PowerRecord> ParsePowerRecord(const std::string& text) {
  std::istringstream in(text);
  PowerRecord r;
  std::string key, extra;
  long long cores = 0;
  if (!(in >> key >> r.power) || key != "power") return std::nullopt;
  if (!(in >> key >> r.host) || key != "host") return std::nullopt;
  if (!(in >> key >> cores) || key != "cores") return std::nullopt;
  if (in >> extra) return std::nullopt;
  if (!std::isfinite(r.power) || r.power <= 0 || cores <= 0 || cores > 1 << 20) return std::nullopt;
  r.cores = static_cast<uint32_t>(cores);
  return r;
}

std::string FormatPowerRecord(const PowerRecord& r) {
  char power[64];
  std::snprintf(power, sizeof power, "%.17g", r.power);
  return std::string("power ") + power + "\nhost " + r.host + "\ncores " + std::to_string(r.cores) +
         "\n";
}

std::optional<double> ReadCachedPower(const std::string& path, const std::string& host,
                                      uint32_t cores) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  auto r = ParsePowerRecord(text.str());
  if (!r || r->host != host || r->cores != cores) return std::nullopt;
  return r->power;
}

Status WriteCachedPower(const std::string& path, const PowerRecord& r) {
  return WriteFileAtomically(path, FormatPowerRecord(r));
}

std::string ThisHostName() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "host";
  return buf;
}

}  // namespace aiac::monitor
