// `run --history FILE`: the run's convergence history as CSV, one row per event, for plotting
// (`aiac-spawner plot`, spawner/plot_command.h) or any spreadsheet:
//   seconds,event,task,incarnation,iteration,change,residual
// `seconds` since the run started; `event` is `report` (a task's progress report: its
// iteration and local change), `failure` (its daemon was lost), `resumed` (it runs again on
// another daemon, `iteration` the checkpoint's), `move` (live balancing moved items from `task`;
// `change` holds the count), or `residual` (the gathered result's residual, no task). Empty
// cells are figures the event does not have. Rows are written as they come and flushed every
// second, so the file can be read while the run goes on.
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>

#include "core/status.h"

namespace aiac::spawner {

class RunHistory {
 public:
  // Creates (or truncates) `path` and writes the header.
  static Result<std::unique_ptr<RunHistory>> Create(const std::string& path);

  void Report(double seconds, size_t task, uint64_t incarnation, uint64_t iteration, double change);
  void Failure(double seconds, size_t task, uint64_t incarnation);
  void Resumed(double seconds, size_t task, uint64_t incarnation, uint64_t iteration);
  void Move(double seconds, size_t from, uint64_t count);
  void Residual(double seconds, double residual);
  // Writes what is buffered; false once a write failed (the disk is full, say).
  bool Flush();
  const std::string& path() const { return path_; }

 private:
  RunHistory(std::string path, std::ofstream out) : path_(std::move(path)), out_(std::move(out)) {}
  void Row(double seconds, const char* event, const std::string& rest);
  std::string path_;
  std::ofstream out_;
  double flushed_at_ = 0;
};

}  // namespace aiac::spawner
