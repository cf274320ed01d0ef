#include "checkpoint/checkpoint.h"

namespace aiac::checkpoint {

Checkpoint MakeCheckpoint(std::string job, uint32_t task, uint64_t incarnation, uint64_t iteration,
                          std::string state) {
  Checkpoint c{std::move(job), task, incarnation, iteration, std::move(state), 0, ""};
  c.checksum = Crc32c(c.state);
  return c;
}

std::string Describe(const Checkpoint& c) {
  return "checkpoint of task " + std::to_string(c.task) + " of job " + c.job + " at iteration " +
         std::to_string(c.iteration) + " (incarnation " + std::to_string(c.incarnation) + ")";
}

}  // namespace aiac::checkpoint
