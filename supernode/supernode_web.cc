// SupernodeService seen from outside: its gauges in the process's metrics and the read-only web
// page (web/index.html) with the data it reads (docs/operations.md, "Metrics and the web page").
#include <capnp/message.h>

#include <map>

#include "net/federation_status.h"
#include "supernode/supernode_service.h"

namespace aiac::supernode {

std::string_view WebPage();  // web/index.html, embedded at build time

namespace {

net::HttpAnswer Json(const nlohmann::json& value) {
  return {200, "application/json",
          value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)};
}

}  // namespace

void SupernodeService::ServeWeb(net::HttpServer& http) {
  auto& registry = metrics::Registry::Process();
  // This super-node's own daemons only: summed over a federation's super-nodes, no daemon counts
  // twice.
  daemons_metric_ = registry.AddGaugeCollector(
      "aiac_daemons", "Daemons registered with this super-node, by state", [this] {
        const auto now = Registry::Clock::now();
        std::map<std::string, double> count;
        for (const auto& v : registry_.View(now)) {
          ++count[net::DaemonStateName(false, v.record.busy, v.running)];
        }
        count["lost"] = static_cast<double>(registry_.Lost(now).size());
        metrics::Registry::Samples samples;
        for (const char* state : {"free", "granted", "busy", "lost"}) {
          samples.push_back({{{"state", state}}, count[state]});
        }
        return samples;
      });
  jobs_metric_ = registry.AddGaugeCollector(
      "aiac_jobs", "Running jobs registered with this super-node", [this] {
        return metrics::Registry::Samples{{{}, static_cast<double>(jobs_.size())}};
      });

  http.Handle("/", [](const std::string&) {
    return net::HttpAnswer{200, "text/html; charset=utf-8", std::string(WebPage())};
  });
  http.Handle("/api/status", [this](const std::string&) {
    capnp::MallocMessageBuilder message;
    auto report = message.initRoot<proto::StatusReport>();
    FillStatusReport(report);
    return Json(net::ToJson(net::ReadStatusReport(report.asReader())));
  });
  http.Handle("/api/history", [this](const std::string& query) {
    const std::string job = net::QueryValue(query, "job");
    nlohmann::json course = history_.ToJson(job);
    if (course.is_null()) {
      return net::HttpAnswer{
          404, "application/json",
          nlohmann::json{{"error", "no job registered here with that id"}}.dump()};
    }
    return Json(course);
  });
}

}  // namespace aiac::supernode
