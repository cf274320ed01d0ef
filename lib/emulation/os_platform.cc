#include "emulation/os_platform.h"

#include <algorithm>

namespace aiac::emulation {

const OsNode* OsPlatform::Find(const std::string& id_or_address) const {
  for (const OsNode& n : nodes) {
    if (n.id == id_or_address || n.address == id_or_address) return &n;
  }
  return nullptr;
}

Result<OsPlatform> PlanOsPlatform(const PlatformFile& platform, int host_cores, int slot) {
  const std::string& name = platform.name;
  const bool name_ok =
      !name.empty() && name.size() <= 32 && std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '-';
      });
  if (!name_ok) {
    return InvalidArgument("platform name '" + name +
                           "' cannot name namespaces: 1 to 32 characters from [A-Za-z0-9_-]");
  }
  if (host_cores < 1) return InvalidArgument("the host needs at least one core");
  if (slot < 0 || slot >= kSlots)
    return InvalidArgument("at most " + std::to_string(kSlots) + " platforms can be up at once");
  if (platform.clusters.size() > 254)
    return InvalidArgument("at most 254 clusters can be emulated (one address byte each)");
  double sum = 0, largest = 0;
  for (const auto& c : platform.clusters) {
    if (c.powers.size() > 254) {
      return InvalidArgument("cluster '" + c.name +
                             "' has more than 254 nodes (one address byte each)");
    }
    for (double p : c.powers) {
      sum += p;
      largest = std::max(largest, p);
    }
  }
  const double per_power = std::min(host_cores / sum, 1 / largest);

  OsPlatform out;
  out.name = name;
  out.slot = slot;
  const std::string prefix = "10." + std::to_string(200 + slot) + ".";
  out.subnet = prefix + "0.0/16";
  out.host_address = prefix + "0.254";
  out.host_device = "aiacemu" + std::to_string(slot);
  for (size_t c = 0; c < platform.clusters.size(); ++c) {
    const auto& cluster = platform.clusters[c];
    for (size_t k = 0; k < cluster.powers.size(); ++k) {
      OsNode n;
      n.id = PlatformFile::NodeId(cluster.name, k + 1);
      n.cluster = cluster.name;
      n.address = prefix + std::to_string(c + 1) + "." + std::to_string(k + 1);
      n.power = cluster.powers[k];
      n.cores = n.power * per_power;
      n.netns = std::string(kNetnsPrefix) + name + "." + n.id;
      out.nodes.push_back(std::move(n));
    }
  }
  return out;
}

}  // namespace aiac::emulation
