#include "runtime/app_log.h"

namespace aiac::runtime {
namespace {

class SpdlogAppLog final : public app::Log {
 public:
  SpdlogAppLog(Logger log, std::string tag) : log_(std::move(log)), tag_(std::move(tag)) {}

  void Write(app::LogLevel level, std::string_view line) const override {
    if (!log_) return;
    const auto spd = level == app::LogLevel::kDebug  ? spdlog::level::debug
                     : level == app::LogLevel::kInfo ? spdlog::level::info
                     : level == app::LogLevel::kWarn ? spdlog::level::warn
                                                     : spdlog::level::err;
    // One line per event: an app's embedded newlines would break the log's format.
    std::string text(line);
    for (char& c : text) {
      if (c == '\n' || c == '\r') c = ' ';
    }
    log_->log(spd, "{}: {}", tag_, text);
  }

 private:
  Logger log_;
  std::string tag_;
};

}  // namespace

std::shared_ptr<const app::Log> MakeAppLog(Logger log, std::string tag) {
  return std::make_shared<SpdlogAppLog>(std::move(log), std::move(tag));
}

}  // namespace aiac::runtime
