#include "daemon/report_group.h"

#include <algorithm>

namespace aiac::daemon {

ReportGroup::ReportGroup(uint32_t self, const std::vector<GroupMember>& group) : self_(self) {
  for (const GroupMember& m : group) {
    auto address = ParseEndpoint(m.address);
    if (address.ok()) members_.push_back({m.task, *address, m.daemon});
  }
}

std::optional<ReportGroup::Member> ReportGroup::coordinator_of_member() const {
  if (members_.empty() || coordinator()) return std::nullopt;
  return members_.front();
}

bool ReportGroup::Moved(uint32_t task, const Endpoint& address, const std::string& daemon) {
  for (Member& m : members_) {
    if (m.task != task) continue;
    m.address = address;
    m.daemon = daemon;
    // What its dead daemon sent speaks for an incarnation that is over.
    gathered_.erase(task);
    return true;
  }
  return false;
}

bool ReportGroup::Gather(const std::string& job, const std::string& sender,
                         proto::TaskProgress::Reader report) {
  if (!coordinator() || report.getJob() != job || report.getTask() == self_) return false;
  auto it = std::find_if(members_.begin(), members_.end(),
                         [&](const Member& m) { return m.task == report.getTask(); });
  if (it == members_.end() || it->daemon != sender) return false;
  auto copy = std::make_unique<capnp::MallocMessageBuilder>();
  copy->setRoot(report);
  gathered_[report.getTask()] = std::move(copy);
  return true;
}

void ReportGroup::TakeInto(capnp::List<proto::TaskProgress>::Builder out, unsigned first) {
  unsigned i = first;
  for (auto& [task, report] : gathered_) {
    if (i >= out.size()) break;
    out.setWithCaveats(i++, report->getRoot<proto::TaskProgress>().asReader());
  }
  gathered_.clear();
}

}  // namespace aiac::daemon
