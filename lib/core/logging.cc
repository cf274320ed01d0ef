#include "core/logging.h"

#include <spdlog/sinks/stdout_color_sinks.h>

namespace aiac {

namespace {

constexpr std::pair<std::string_view, spdlog::level::level_enum> kLevels[] = {
    {"trace", spdlog::level::trace}, {"debug", spdlog::level::debug},
    {"info", spdlog::level::info},   {"warn", spdlog::level::warn},
    {"error", spdlog::level::err},   {"critical", spdlog::level::critical},
    {"off", spdlog::level::off}};

}  // namespace

const std::vector<std::string>& LogLevelNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& [name, level] : kLevels) out.emplace_back(name);
    return out;
  }();
  return names;
}

Result<spdlog::level::level_enum> ParseLogLevel(std::string_view name) {
  for (const auto& [n, level] : kLevels) {
    if (n == name) return level;
  }
  return InvalidArgument("unknown log level '" + std::string(name) +
                         "' (expected trace, debug, info, warn, error, critical or off)");
}

Logger MakeLogger(const std::string& name, spdlog::level::level_enum level) {
  auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  auto logger = std::make_shared<spdlog::logger>(name, std::move(sink));
  logger->set_pattern("%H:%M:%S.%e %n %^%l%$ %v");
  logger->set_level(level);
  logger->flush_on(spdlog::level::info);
  return logger;
}

}  // namespace aiac
