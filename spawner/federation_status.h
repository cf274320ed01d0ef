// What `aiac-spawner status` shows as text: the federation (net/federation_status.h) as aligned
// tables, like `sinfo` and `squeue`, or one job and its tasks.
#pragma once

#include <string>

#include "net/federation_status.h"

namespace aiac::spawner {

using net::DaemonRow;
using net::FederationStatus;
using net::ReadStatusReport;
using net::ToJson;

std::string ToText(const FederationStatus& status);
// One job: its figures, then a row per task.
std::string ToText(const net::JobStatus& job);

}  // namespace aiac::spawner
