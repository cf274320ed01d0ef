#include "core/status_line_sink.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>

namespace aiac {

namespace {

// Columns of the terminal on standard error; 80 when it cannot say.
size_t Columns() {
  winsize ws{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 80;
}

}  // namespace

void StatusLineSink::SetLine(const std::string& line) {
  std::lock_guard<std::mutex> lock(mutex_);
  line_ = line;
  Erase();
  Draw();
  std::fflush(stderr);
}

void StatusLineSink::Erase() {
  if (!shown_) return;
  std::fputs("\r\033[K", stderr);  // back to the start of the line, and clear it
  shown_ = false;
}

void StatusLineSink::Draw() {
  if (line_.empty()) return;
  // One screen line: a wrapped line could not be erased with one \r.
  const size_t width = Columns() > 1 ? Columns() - 1 : 1;
  std::fwrite(line_.data(), 1, std::min(line_.size(), width), stderr);
  shown_ = true;
}

void StatusLineSink::sink_it_(const spdlog::details::log_msg& msg) {
  spdlog::memory_buf_t formatted;
  formatter_->format(msg, formatted);
  Erase();
  std::fwrite(formatted.data(), 1, formatted.size(), stderr);
  Draw();
  std::fflush(stderr);
}

void StatusLineSink::flush_() { std::fflush(stderr); }

}  // namespace aiac
