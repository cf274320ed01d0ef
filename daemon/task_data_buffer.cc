#include "daemon/task_data_buffer.h"

#include "aiac/plugin.h"
#include "core/memory_budget.h"
#include "core/printable.h"

namespace aiac::daemon {

Status TaskDataBuffer::Add(proto::TaskData::Reader chunk) {
  const std::string job = chunk.getJob().cStr();
  const uint64_t offset = chunk.getOffset();
  const auto bytes = chunk.getBytes();
  if (offset == 0) {
    AIAC_RETURN_IF_ERROR(CheckFitsInMemory("task data of " + std::to_string(chunk.getTotal()) + " bytes",
                                           static_cast<double>(chunk.getTotal())));
    job_ = job;
    task_ = chunk.getTask();
    total_ = chunk.getTotal();
    bytes_.clear();
    bytes_.reserve(total_);
  } else if (job != job_ || chunk.getTask() != task_ || offset != bytes_.size() || chunk.getTotal() != total_) {
    return ProtocolError("chunk at offset " + std::to_string(offset) + " of task " + std::to_string(chunk.getTask()) +
                         " of job " + Printable(job, 64) + " does not follow the " + std::to_string(bytes_.size()) +
                         " bytes received of task " + std::to_string(task_));
  }
  if (bytes.size() > total_ - bytes_.size()) {
    return ProtocolError("chunks exceed the declared total of " + std::to_string(total_) + " bytes");
  }
  bytes_.append(reinterpret_cast<const char*>(bytes.begin()), bytes.size());
  return Status::Ok();
}

Result<std::string> TaskDataBuffer::Take(const std::string& job, uint32_t task, uint64_t size,
                                         const std::string& sha256) {
  std::string bytes = std::move(bytes_);
  const bool same = job == job_ && task == task_;
  bytes_.clear();
  job_.clear();
  total_ = 0;
  if (!same || bytes.size() != size) {
    return InvalidArgument("task data incomplete: " + std::to_string(same ? bytes.size() : 0) + " of " +
                           std::to_string(size) + " bytes received");
  }
  if (runtime::Sha256(bytes) != sha256) return Corruption("task data does not match its SHA-256");
  return bytes;
}

}  // namespace aiac::daemon
