#include "monitor/run_queue.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace aiac::monitor {

Result<int> ReadRunnable(const std::string& proc_stat) {
  std::ifstream in(proc_stat);
  if (!in) return IoError("cannot read " + proc_stat);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string key;
    int value = 0;
    if (fields >> key && key == "procs_running") {
      if (!(fields >> value) || value < 0)
        return Corruption(proc_stat + ": procs_running is not a count");
      return value;
    }
  }
  return Corruption(proc_stat + " has no procs_running line");
}

void RunQueueMonitor::Add(double jobs) { samples_.Add(std::max(1.0, jobs)); }

void RunQueueMonitor::AddHostSample(int runnable, unsigned cores) {
  // The reader is runnable while it reads: it is not load.
  const double others = std::max(0, runnable - 1);
  Add(others / std::max(1u, cores));
}

}  // namespace aiac::monitor
