// A daemon's measured power, kept in its data directory so that a restart does not measure
// again (each measurement costs the start-up 200 ms and comes out differently).
//
// The file (DATA/power) holds three lines, "power GFLOPS", "host NAME", "cores N": a cached
// value counts only on the host and core count it was measured with, so a data directory
// copied to another machine is measured again.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/status.h"

namespace aiac::monitor {

struct PowerRecord {
  double power = 0;  // GFlop/s, > 0
  std::string host;
  uint32_t cores = 0;
};

// The record in `text`, or nullopt when it is not one (any other content, a power that is not a
// finite positive number).
std::optional<PowerRecord> ParsePowerRecord(const std::string& text);
std::string FormatPowerRecord(const PowerRecord& r);

// The power cached at `path` for `host` and `cores`, if any.
std::optional<double> ReadCachedPower(const std::string& path, const std::string& host,
                                      uint32_t cores);
// Writes the record atomically (a temporary file renamed over `path`).
Status WriteCachedPower(const std::string& path, const PowerRecord& r);

// This host's name (gethostname), "host" when it has none: what a record is keyed by.
std::string ThisHostName();

}  // namespace aiac::monitor
