#include "spawner/deployment.h"

#include <algorithm>
#include <map>

#include "mapping/backup_choice.h"

namespace aiac::spawner {

namespace {

// Latencies the mapping's model assumes until links are measured (docs/architecture.md, design
// choices leaves measuring to the monitor): cheap inside a cluster, dearer across.
constexpr double kIntraClusterLatency = 0.0001;
constexpr double kInterClusterLatency = 0.01;

}  // namespace

Result<std::unique_ptr<Deployment>> Deployment::Create(DeploymentSpec spec,
                                                       std::vector<GrantedDaemon> granted) {
  const size_t tasks = spec.graph.size();
  if (tasks == 0) return InvalidArgument("a job needs at least one task");
  if (granted.size() < tasks) {
    return InvalidArgument(std::to_string(granted.size()) + " daemons for " +
                           std::to_string(tasks) + " tasks");
  }
  std::unique_ptr<Deployment> d(new Deployment());
  d->spec_ = std::move(spec);
  d->granted_ = std::move(granted);
  AIAC_RETURN_IF_ERROR(d->BuildPlatform());
  AIAC_ASSIGN_OR_RETURN(auto tig, TigOf(d->spec_.graph));
  d->tig_ = std::make_unique<model::Tig>(std::move(tig));
  AIAC_ASSIGN_OR_RETURN(auto mapper, mapping::MakeMapper(d->spec_.mapping, 0.1));
  d->mapper_ = std::move(mapper);
  auto m = d->mapper_->Map(*d->platform_, *d->tig_);
  d->placement_ = std::make_unique<mapping::Placement>(std::move(m.placement));
  d->places_.resize(tasks);
  for (size_t t = 0; t < tasks; ++t) {
    const auto& daemon = d->granted_[d->granted_of_node_[static_cast<size_t>(
        d->placement_->node_of(static_cast<int>(t)))]];
    d->places_[t].daemon = daemon.id;
    d->places_[t].address = daemon.address;
  }
  d->senders_ = SendersOf(d->spec_.graph);
  // Checkpoints of each task go to `backups` daemons of other tasks (mapping/backup_choice.h).
  d->backups_.assign(tasks, {});
  d->hosted_.assign(tasks, {});
  if (d->spec_.backups > 0) {
    std::vector<int> daemon_of_task(tasks), cluster_of_daemon(d->granted_.size()),
        task_of_daemon(d->granted_.size(), -1);
    std::map<std::string, int> cluster_index;
    for (size_t i = 0; i < d->granted_.size(); ++i) {
      cluster_of_daemon[i] =
          cluster_index.emplace(d->granted_[i].cluster, static_cast<int>(cluster_index.size()))
              .first->second;
    }
    for (size_t t = 0; t < tasks; ++t) {
      daemon_of_task[t] = static_cast<int>(
          d->granted_of_node_[static_cast<size_t>(d->placement_->node_of(static_cast<int>(t)))]);
      task_of_daemon[static_cast<size_t>(daemon_of_task[t])] = static_cast<int>(t);
    }
    auto chosen = mapping::ChooseBackups(daemon_of_task, cluster_of_daemon,
                                         static_cast<int>(d->spec_.backups));
    for (uint32_t t = 0; t < tasks; ++t) {
      for (int daemon : chosen[t]) {
        d->backups_[t].push_back(
            static_cast<uint32_t>(task_of_daemon[static_cast<size_t>(daemon)]));
      }
    }
    d->hosted_ = HostedOf(d->backups_);
  }
  return d;
}

std::vector<std::vector<uint32_t>> Deployment::HostedOf(
    const std::vector<std::vector<uint32_t>>& backups) {
  std::vector<std::vector<uint32_t>> hosted(backups.size());
  for (uint32_t t = 0; t < backups.size(); ++t) {
    for (uint32_t holder : backups[t]) hosted[holder].push_back(t);
  }
  return hosted;
}

Result<model::Tig> Deployment::TigOf(const std::vector<app::TaskNode>& graph) {
  // The app's TIG: one undirected edge per pair, volumes of both directions added.
  const auto tasks = static_cast<uint32_t>(graph.size());
  std::vector<model::TaskSpec> specs;
  std::map<std::pair<uint32_t, uint32_t>, double> volume;
  for (uint32_t t = 0; t < tasks; ++t) {
    specs.push_back({t, std::max(1e-9, graph[t].cost)});
    for (const auto& [m, v] : graph[t].edges) {
      if (m == t || m >= tasks) continue;
      volume[{std::min(t, m), std::max(t, m)}] += v;
    }
  }
  std::vector<model::EdgeSpec> edges;
  for (const auto& [pair, v] : volume) edges.push_back({pair.first, pair.second, v});
  auto tig = model::Tig::Build(std::move(specs), std::move(edges));
  if (!tig.ok()) return Internal("app task graph: " + tig.status().message());
  return tig;
}

std::vector<std::vector<uint32_t>> Deployment::SendersOf(const std::vector<app::TaskNode>& graph) {
  // Who sends to whom: task m sends to every task its edges name.
  const auto tasks = static_cast<uint32_t>(graph.size());
  std::vector<std::vector<uint32_t>> senders(tasks);
  for (uint32_t m = 0; m < tasks; ++m) {
    for (const auto& [to, v] : graph[m].edges) {
      if (to != m && to < tasks) senders[to].push_back(m);
    }
  }
  return senders;
}

Status Deployment::Regraph(std::vector<app::TaskNode> graph) {
  if (graph.size() != places_.size()) {
    return InvalidArgument("a new task graph of " + std::to_string(graph.size()) + " tasks for " +
                           std::to_string(places_.size()));
  }
  AIAC_ASSIGN_OR_RETURN(auto tig, TigOf(graph));
  spec_.graph = std::move(graph);
  tig_ = std::make_unique<model::Tig>(std::move(tig));
  senders_ = SendersOf(spec_.graph);
  RebuildPlacement();
  return Status::Ok();
}

Status Deployment::BuildPlatform() {
  // Clusters by name, powers as measured by the daemons.
  std::map<std::string, model::ClusterSpec> clusters;
  for (const auto& d : granted_) {
    auto& c = clusters[d.cluster];
    c.name = d.cluster;
    c.latency = kIntraClusterLatency;
    c.nodes.push_back({d.id, d.power > 0 ? d.power : 1.0, true});
  }
  std::vector<model::ClusterSpec> specs;
  std::vector<model::InterLatency> inter;
  for (auto& [name, c] : clusters) specs.push_back(std::move(c));
  for (size_t a = 0; a < specs.size(); ++a)
    for (size_t b = a + 1; b < specs.size(); ++b)
      inter.push_back({specs[a].name, specs[b].name, kInterClusterLatency});
  // The default mapping takes the daemons in the order the super-node granted them.
  std::vector<std::string> given;
  for (const auto& d : granted_) given.push_back(d.id);
  auto platform = model::Platform::Build(std::move(specs), std::move(inter), given);
  if (!platform.ok()) return Internal("granted daemons: " + platform.status().message());
  platform_ = std::make_unique<model::Platform>(std::move(*platform));
  std::map<std::string, size_t> by_id;
  for (size_t i = 0; i < granted_.size(); ++i) by_id[granted_[i].id] = i;
  granted_of_node_.clear();
  for (const auto& node : platform_->nodes()) granted_of_node_.push_back(by_id.at(node.id));
  return Status::Ok();
}

int Deployment::NodeOf(const std::string& daemon) const {
  for (size_t node = 0; node < granted_of_node_.size(); ++node) {
    if (granted_[granted_of_node_[node]].id == daemon) return static_cast<int>(node);
  }
  return -1;
}

void Deployment::RebuildPlacement() {
  placement_ = std::make_unique<mapping::Placement>(*platform_, *tig_);
  for (const auto& id : lost_) {
    if (int node = NodeOf(id); node >= 0) placement_->Fail(node);
  }
  for (size_t t = 0; t < places_.size(); ++t) {
    if (places_[t].waiting || lost_.count(places_[t].daemon)) continue;
    if (int node = NodeOf(places_[t].daemon); node >= 0)
      placement_->Assign(static_cast<int>(t), node);
  }
}

void Deployment::Assign(size_t t, int node) {
  placement_->Assign(static_cast<int>(t), node);
  const GrantedDaemon& next = granted_[granted_of_node_[static_cast<size_t>(node)]];
  places_[t].daemon = next.id;
  places_[t].address = next.address;
  places_[t].waiting = false;
}

bool Deployment::Lose(size_t t) {
  TaskPlace& place = places_[t];
  ++place.incarnation;
  place.waiting = true;
  lost_.insert(place.daemon);
  const int failed = NodeOf(place.daemon);
  if (failed >= 0) placement_->Fail(failed);
  return Place(t);
}

void Deployment::AddGranted(const std::vector<GrantedDaemon>& daemons) {
  for (const auto& d : daemons) {
    auto known = std::find_if(granted_.begin(), granted_.end(),
                              [&](const GrantedDaemon& g) { return g.id == d.id; });
    if (known == granted_.end()) {
      granted_.push_back(d);
    } else {
      *known = d;
      lost_.erase(d.id);
    }
  }
  // A platform of the new set; BuildPlatform cannot fail on daemons it accepted before, and a
  // new daemon's fields are checked by the super-node that registered it.
  if (BuildPlatform().ok()) RebuildPlacement();
}

Status Deployment::Resume(const std::vector<GrantedDaemon>& later,
                          const std::vector<std::string>& lost,
                          const std::vector<TaskPlace>& places,
                          const std::vector<std::vector<uint32_t>>& backups) {
  if (places.size() != places_.size() || backups.size() != places_.size()) {
    return InvalidArgument("the stored deployment has " + std::to_string(places.size()) +
                           " tasks, the job " + std::to_string(places_.size()));
  }
  if (!later.empty()) AddGranted(later);
  for (const auto& p : places) {
    if (NodeOf(p.daemon) < 0)
      return InvalidArgument("the stored deployment names daemon " + p.daemon +
                             ", never granted to the job");
  }
  for (uint32_t t = 0; t < backups.size(); ++t) {
    for (uint32_t holder : backups[t]) {
      if (holder >= places_.size() || holder == t)
        return InvalidArgument("the stored deployment has a bad backup of task " +
                               std::to_string(t));
    }
  }
  places_ = places;
  lost_ = std::set<std::string>(lost.begin(), lost.end());
  backups_ = backups;
  hosted_ = HostedOf(backups_);
  RebuildPlacement();
  return Status::Ok();
}

bool Deployment::Place(size_t t) {
  TaskPlace& place = places_[t];
  if (!place.waiting) return true;
  // The mapping algorithm picks the replacement (MAHEVE: a reserved node of the dead one's
  // cluster first), among the granted daemons no task runs on.
  const int node =
      mapper_->Replace(*platform_, *tig_, *placement_, NodeOf(place.daemon), static_cast<int>(t));
  if (node < 0) return false;
  Assign(t, node);
  return true;
}

}  // namespace aiac::spawner
