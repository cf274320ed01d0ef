#include "spawner/run_history.h"

#include <spdlog/fmt/fmt.h>

namespace aiac::spawner {

Result<std::unique_ptr<RunHistory>> RunHistory::Create(const std::string& path) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) return InvalidArgument("--history: cannot write " + path);
  out << "seconds,event,task,incarnation,iteration,change,residual\n";
  if (!out) return InvalidArgument("--history: cannot write " + path);
  return std::unique_ptr<RunHistory>(new RunHistory(path, std::move(out)));
}

void RunHistory::Row(double seconds, const char* event, const std::string& rest) {
  out_ << fmt::format("{:.3f},{},{}\n", seconds, event, rest);
  if (seconds - flushed_at_ >= 1) {
    out_.flush();
    flushed_at_ = seconds;
  }
}

void RunHistory::Report(double seconds, size_t task, uint64_t incarnation, uint64_t iteration,
                        double change) {
  Row(seconds, "report", fmt::format("{},{},{},{:.6e},", task, incarnation, iteration, change));
}

void RunHistory::Failure(double seconds, size_t task, uint64_t incarnation) {
  Row(seconds, "failure", fmt::format("{},{},,,", task, incarnation));
}

void RunHistory::Resumed(double seconds, size_t task, uint64_t incarnation, uint64_t iteration) {
  Row(seconds, "resumed", fmt::format("{},{},{},,", task, incarnation, iteration));
}

void RunHistory::Move(double seconds, size_t from, uint64_t count) {
  Row(seconds, "move", fmt::format("{},,,{},", from, count));
}

void RunHistory::Residual(double seconds, double residual) {
  Row(seconds, "residual", fmt::format(",,,,{:.6e}", residual));
}

bool RunHistory::Flush() {
  out_.flush();
  return static_cast<bool>(out_);
}

}  // namespace aiac::spawner
