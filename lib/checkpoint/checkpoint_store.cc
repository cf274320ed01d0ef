#include "checkpoint/checkpoint_store.h"

#include "core/names.h"

namespace aiac::checkpoint {

Status CheckStorable(const Checkpoint& c) {
  AIAC_RETURN_IF_ERROR(CheckName("job id", c.job));
  if (!Verifies(c)) return Corruption(Describe(c) + " does not match its checksum");
  return Status::Ok();
}

}  // namespace aiac::checkpoint
