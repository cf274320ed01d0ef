#include "spawner/gateways.h"

#include <algorithm>
#include <set>

namespace aiac::spawner {

size_t Gateway(const std::vector<std::string>& cluster_of_task, const std::string& from,
               const std::string& to) {
  std::vector<size_t> members;
  std::set<std::string> others;
  for (size_t t = 0; t < cluster_of_task.size(); ++t) {
    if (cluster_of_task[t] == from)
      members.push_back(t);
    else
      others.insert(cluster_of_task[t]);
  }
  if (members.empty()) return 0;
  const auto rank = static_cast<size_t>(std::distance(others.begin(), others.lower_bound(to)));
  return members[rank % members.size()];
}

std::vector<size_t> GatewaysBetween(const std::vector<std::string>& cluster_of_task, size_t a,
                                    size_t b) {
  const std::string &ca = cluster_of_task[a], &cb = cluster_of_task[b];
  if (ca == cb) return {};
  std::vector<size_t> via;
  if (const size_t out = Gateway(cluster_of_task, ca, cb); out != a) via.push_back(out);
  if (const size_t in = Gateway(cluster_of_task, cb, ca); in != b) via.push_back(in);
  return via;
}

std::vector<std::vector<uint32_t>> ReportGroups(const std::vector<std::string>& cluster_of_task) {
  std::vector<std::string> names;
  std::vector<std::vector<uint32_t>> groups;
  for (size_t t = 0; t < cluster_of_task.size(); ++t) {
    const auto index = static_cast<size_t>(
        std::find(names.begin(), names.end(), cluster_of_task[t]) - names.begin());
    if (index == names.size()) {
      names.push_back(cluster_of_task[t]);
      groups.emplace_back();
    }
    groups[index].push_back(static_cast<uint32_t>(t));
  }
  if (groups.size() < 2) return {};
  std::erase_if(groups, [](const std::vector<uint32_t>& g) { return g.size() < 2; });
  return groups;
}

}  // namespace aiac::spawner
