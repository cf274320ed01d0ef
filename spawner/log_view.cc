#include "spawner/log_view.h"

#include <cstdio>

#include "spawner/text_table.h"

namespace aiac::spawner {
namespace {

// "2.31s 81%": seconds and their share of `total`.
std::string Share(double seconds, double total) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.2fs %3.0f%%", seconds,
                total > 0 ? 100.0 * seconds / total : 0.0);
  return buf;
}

std::string Bytes(uint64_t b) {
  char buf[32];
  if (b >= (1ull << 30)) {
    std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(b) / (1ull << 30));
  } else if (b >= (1ull << 20)) {
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(b) / (1ull << 20));
  } else if (b >= (1ull << 10)) {
    std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(b) / (1ull << 10));
  } else {
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(b));
  }
  return buf;
}

std::vector<std::string> Row(const std::string& task, const std::string& daemon,
                             uint64_t iterations, const runtime::TaskProfile& p) {
  const double total = p.compute_s + p.wait_s + p.checkpoint_s + p.move_s;
  return {task,
          daemon,
          std::to_string(iterations),
          Share(p.compute_s, total),
          Share(p.wait_s, total),
          Share(p.checkpoint_s, total),
          Share(p.move_s, total),
          std::to_string(p.messages_sent) + " / " + Bytes(p.bytes_sent),
          std::to_string(p.messages_received) + " / " + Bytes(p.bytes_received)};
}

}  // namespace

std::string LogViewText(const RunSummary& s) {
  std::vector<std::vector<std::string>> rows;
  runtime::TaskProfile all;
  uint64_t iterations = 0;
  for (const auto& t : s.per_task) {
    rows.push_back(Row(std::to_string(t.task), t.daemon, t.iterations, t.profile));
    all += t.profile;
    iterations += t.iterations;
  }
  rows.push_back(Row("all", "", iterations, all));
  return "\nWhere the time went, per task (seconds, share of the task's time):\n" +
         AlignedTable({"TASK", "DAEMON", "ITERATIONS", "COMPUTE", "WAIT", "CHECKPOINT", "MOVE",
                       "SENT (MSG / BYTES)", "RECEIVED (MSG / BYTES)"},
                      rows);
}

nlohmann::json ProfileJson(const runtime::TaskProfile& p) {
  return {{"compute_s", p.compute_s},
          {"wait_s", p.wait_s},
          {"checkpoint_s", p.checkpoint_s},
          {"move_s", p.move_s},
          {"messages_sent", p.messages_sent},
          {"bytes_sent", p.bytes_sent},
          {"messages_received", p.messages_received},
          {"bytes_received", p.bytes_received}};
}

}  // namespace aiac::spawner
