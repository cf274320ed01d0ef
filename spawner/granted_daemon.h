// A daemon a super-node granted to a job, as the spawner knows it.
#pragma once

#include <string>

namespace aiac::spawner {

struct GrantedDaemon {
  std::string id, address, cluster;
  double power = 1;  // as the daemon measured it
};

}  // namespace aiac::spawner
