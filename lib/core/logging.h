// Logger construction. No global logger: each main() makes one and passes it down.
#pragma once

#include <spdlog/spdlog.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace aiac {

using Logger = std::shared_ptr<spdlog::logger>;

// Parses "trace", "debug", "info", "warn", "error", "critical" or "off".
const std::vector<std::string>& LogLevelNames();
Result<spdlog::level::level_enum> ParseLogLevel(std::string_view name);

// How log lines look: text (`2026-11-26T16:47:06.123+00:00 daemon info ...`) or one JSON object
// per line (`{"time":"...","process":"daemon","level":"info","message":"..."}`), for machines.
enum class LogFormat { kText, kJson };
const std::vector<std::string>& LogFormatNames();
Result<LogFormat> ParseLogFormat(std::string_view name);

// A logger named `name` (the process role) writing one line per event to stderr, or to `sink`
// when one is given (core/status_line_sink.h: a progress line kept under the log on a terminal).
Logger MakeLogger(const std::string& name, spdlog::level::level_enum level,
                  LogFormat format = LogFormat::kText, spdlog::sink_ptr sink = nullptr);

}  // namespace aiac
