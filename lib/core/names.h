// What a name sent over the wire may look like: node ids (daemons, super-nodes, spawners), job
// ids, cluster and app names. They end up in logs, registry keys and file names, so they are
// short and printable: 1 to 128 characters from [A-Za-z0-9._:@+-].
#pragma once

#include <cstddef>
#include <string_view>

#include "core/status.h"

namespace aiac {

inline constexpr size_t kMaxNameBytes = 128;

// InvalidArgument naming `what` ("node id", "job id", ...) when `name` is not acceptable; the
// message shows the name through Printable(), so it is safe to log.
Status CheckName(std::string_view what, std::string_view name);

}  // namespace aiac
