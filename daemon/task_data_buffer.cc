#include "daemon/task_data_buffer.h"

#include "core/memory_budget.h"
#include "core/printable.h"
#include "core/sha256.h"
#include "runtime/plugin.h"

namespace aiac::daemon {

Status TaskDataBuffer::Add(proto::TaskData::Reader chunk) {
  const std::string job = chunk.getJob().cStr();
  const auto bytes = chunk.getBytes();
  Status s = Add(KeyOf(job, chunk.getTask()), chunk.getOffset(), chunk.getTotal(),
                 std::string_view(reinterpret_cast<const char*>(bytes.begin()), bytes.size()));
  if (s.ok() || s.code() != StatusCode::kProtocol) return s;
  return ProtocolError("task " + std::to_string(chunk.getTask()) + " of job " + Printable(job, 64) +
                       ": " + s.message());
}

Status TaskDataBuffer::Add(const std::string& key, uint64_t offset, uint64_t total,
                           std::string_view bytes) {
  if (offset == 0) {
    reserved_.Release();  // (an earlier transfer left unfinished)
    AIAC_RETURN_IF_ERROR(CheckFitsInMemory("data of " + std::to_string(total) + " bytes",
                                           static_cast<double>(total)));
    AIAC_ASSIGN_OR_RETURN(
        reserved_, ReserveFrom(budget_, "data of " + std::to_string(total) + " bytes", total));
    key_ = key;
    total_ = total;
    bytes_.clear();
    bytes_.reserve(total_);
  } else if (key != key_ || offset != bytes_.size() || total != total_) {
    return ProtocolError("chunk at offset " + std::to_string(offset) + " does not follow the " +
                         std::to_string(bytes_.size()) + " bytes received");
  }
  if (bytes.size() > total_ - bytes_.size()) {
    return ProtocolError("chunks exceed the declared total of " + std::to_string(total_) +
                         " bytes");
  }
  bytes_.append(bytes);
  return Status::Ok();
}

Result<std::string> TaskDataBuffer::Take(const std::string& job, uint32_t task, uint64_t size,
                                         const std::string& sha256) {
  auto data = Take(KeyOf(job, task), size, sha256);
  if (!data.ok() && data.status().code() == StatusCode::kCorruption) {
    return Corruption("task data does not match its SHA-256");
  }
  if (!data.ok()) return InvalidArgument("task data " + data.status().message());
  return data;
}

Result<std::string> TaskDataBuffer::Take(const std::string& key, uint64_t size,
                                         const std::string& sha256) {
  std::string bytes = std::move(bytes_);
  const bool same = key == key_;
  reserved_.Release();
  bytes_.clear();
  key_.clear();
  total_ = 0;
  if (!same || bytes.size() != size) {
    return InvalidArgument("incomplete: " + std::to_string(same ? bytes.size() : 0) + " of " +
                           std::to_string(size) + " bytes received");
  }
  if (Sha256(bytes) != sha256) return Corruption("data does not match its SHA-256");
  return bytes;
}

}  // namespace aiac::daemon
