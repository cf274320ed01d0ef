#include "monitor/power_cache.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

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
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << FormatPowerRecord(r);
    out.flush();
    if (!out) return IoError("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    return IoError("cannot rename " + tmp + " to " + path);
  return Status::Ok();
}

std::string ThisHostName() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "host";
  return buf;
}

}  // namespace aiac::monitor
