// A line kept at the bottom of a terminal and rewritten in place (the spawner's progress while a
// job runs), with the log lines scrolling above it, as apt and cargo show theirs: a spdlog sink
// for standard error that erases the line, writes the log line, and draws the line again.
// Thread-safe, like every spdlog _mt sink. Meant for a terminal only: the caller decides
// (isatty); elsewhere progress is plain log lines.
#pragma once

#include <spdlog/sinks/base_sink.h>

#include <mutex>
#include <string>

namespace aiac {

class StatusLineSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  // Draws `line` in place of the last one (cut to the terminal's width); empty erases it.
  void SetLine(const std::string& line);

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override;
  void flush_() override;

 private:
  void Erase();
  void Draw();
  std::string line_;
  bool shown_ = false;
};

}  // namespace aiac
