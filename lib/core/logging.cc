#include "core/logging.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include <cstdio>

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

Result<LogFormat> ParseLogFormat(std::string_view name) {
  if (name == "text") return LogFormat::kText;
  if (name == "json") return LogFormat::kJson;
  return InvalidArgument("unknown log format '" + std::string(name) + "' (expected text or json)");
}

const std::vector<std::string>& LogFormatNames() {
  static const std::vector<std::string> names = {"text", "json"};
  return names;
}

namespace {

// %* in a pattern: the message as the inside of a JSON string (quotes, backslashes and control
// characters escaped), so that a line of --log-format json is one valid JSON object.
class JsonEscapedMessage final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    for (const char c : msg.payload) {
      const auto u = static_cast<unsigned char>(c);
      if (c == '"' || c == '\\') {
        dest.push_back('\\');
        dest.push_back(c);
      } else if (u < 0x20) {
        char escaped[8];
        std::snprintf(escaped, sizeof escaped, "\\u%04x", u);
        dest.append(escaped, escaped + 6);
      } else {
        dest.push_back(c);
      }
    }
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JsonEscapedMessage>();
  }
};

}  // namespace

Logger MakeLogger(const std::string& name, spdlog::level::level_enum level, LogFormat format,
                  spdlog::sink_ptr sink) {
  if (!sink) sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  auto logger = std::make_shared<spdlog::logger>(name, std::move(sink));
  // ISO 8601 date and time, with the UTC offset: logs of several hosts and days compare.
  constexpr const char* kTime = "%Y-%m-%dT%H:%M:%S.%e%z";
  if (format == LogFormat::kJson) {
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    formatter->add_flag<JsonEscapedMessage>('*').set_pattern(
        std::string("{\"time\":\"") + kTime +
        "\",\"process\":\"%n\",\"level\":\"%l\",\"message\":\"%*\"}");
    logger->set_formatter(std::move(formatter));
  } else {
    logger->set_pattern(std::string(kTime) + " %n %^%l%$ %v");
  }
  logger->set_level(level);
  logger->flush_on(spdlog::level::info);
  return logger;
}

}  // namespace aiac
