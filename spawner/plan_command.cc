#include "spawner/plan_command.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

#include "balance/lee_cho.h"
#include "redistribution/distpm.h"
#include "redistribution/ring.h"
#include "spawner/json_input.h"

namespace aiac::spawner {

using nlohmann::json;
using ojson = nlohmann::ordered_json;

namespace {

int BadInput(const std::string& what, const Status& s) {
  std::fprintf(stderr, "aiac-spawner plan %s: %s\n", what.c_str(), s.message().c_str());
  return 2;
}

Result<std::vector<double>> Numbers(const json& v, const std::string& what) {
  if (!v.is_array()) return InvalidArgument("'" + what + "' must be an array of numbers");
  std::vector<double> out;
  for (const auto& x : v) {
    if (!x.is_number()) return InvalidArgument("'" + what + "' must be an array of numbers");
    out.push_back(x.get<double>());
  }
  return out;
}

Result<std::vector<std::vector<double>>> Matrix(const json& v, const std::string& what) {
  if (!v.is_array()) return InvalidArgument("'" + what + "' must be an array of rows");
  std::vector<std::vector<double>> out;
  for (const auto& row : v) {
    AIAC_ASSIGN_OR_RETURN(auto r, Numbers(row, what));
    out.push_back(std::move(r));
  }
  return out;
}

int DistPm(const std::string& input) {
  const std::string what = "distpm";
  auto j = ReadJsonFile(input);
  if (!j.ok()) return BadInput(what, j.status());
  if (Status s = CheckFields(*j, input, {"groups", "alpha", "beta"}, {"groups", "alpha", "beta"});
      !s.ok()) {
    return BadInput(what, s);
  }
  redistribution::MigrationInput in;
  if (!(*j)["groups"].is_array())
    return BadInput(what, InvalidArgument("'groups' must be an array"));
  for (size_t g = 0; g < (*j)["groups"].size(); ++g) {
    const json& gj = (*j)["groups"][g];
    const std::string where = input + ": groups[" + std::to_string(g) + "]";
    if (Status s = CheckFields(gj, where, {"name", "load", "target"}, {"name", "load", "target"});
        !s.ok()) {
      return BadInput(what, s);
    }
    if (!gj["name"].is_string())
      return BadInput(what, InvalidArgument(where + ": 'name' must be a string"));
    auto load = NumberField(gj, "load", where);
    if (!load.ok()) return BadInput(what, load.status());
    auto target = NumberField(gj, "target", where);
    if (!target.ok()) return BadInput(what, target.status());
    in.groups.push_back({gj["name"].get<std::string>(), *load, *target});
  }
  auto alpha = Matrix((*j)["alpha"], "alpha");
  if (!alpha.ok()) return BadInput(what, alpha.status());
  auto beta = Matrix((*j)["beta"], "beta");
  if (!beta.ok()) return BadInput(what, beta.status());
  in.alpha = std::move(*alpha);
  in.beta = std::move(*beta);
  if (Status s = redistribution::CheckMigrationInput(in); !s.ok()) return BadInput(what, s);
  auto plans = redistribution::PlanMigration(in);
  if (!plans.ok()) return BadInput(what, plans.status());

  auto names = [&](const std::vector<int>& idx) {
    ojson a = ojson::array();
    for (int g : idx) a.push_back(in.groups[g].name);
    return a;
  };
  auto flows = [&](const redistribution::MigrationPlan& p) {
    ojson a = ojson::array();
    for (const auto& f : p.flows) {
      a.push_back(
          {{"from", in.groups[f.from].name}, {"to", in.groups[f.to].name}, {"amount", f.amount}});
    }
    return a;
  };
  ojson out;
  out["overloaded"] = names(plans->overloaded);
  out["underloaded"] = names(plans->underloaded);
  out["plans"]["distpm"] = {{"lp_objective", plans->distpm.lp_objective},
                            {"makespan", plans->distpm.makespan},
                            {"flows", flows(plans->distpm)}};
  out["plans"]["greedy"] = {{"makespan", plans->greedy.makespan}, {"flows", flows(plans->greedy)}};
  std::printf("%s\n", out.dump(2).c_str());
  return 0;
}

Result<std::vector<int64_t>> Integers(const json& v, const std::string& what) {
  if (!v.is_array()) return InvalidArgument("'" + what + "' must be an array of whole numbers");
  std::vector<int64_t> out;
  for (const auto& x : v) {
    if (x.is_number_integer()) {
      out.push_back(x.get<int64_t>());
    } else if (x.is_number() && x.get<double>() == std::floor(x.get<double>()) &&
               std::abs(x.get<double>()) < 9e15) {
      out.push_back(static_cast<int64_t>(x.get<double>()));
    } else {
      return InvalidArgument("'" + what + "' must be an array of whole numbers");
    }
  }
  return out;
}

int Ring(const std::string& input) {
  const std::string what = "ring";
  auto j = ReadJsonFile(input);
  if (!j.ok()) return BadInput(what, j.status());
  if (Status s = CheckFields(*j, input, {"direction", "loads", "delta", "c_next", "c_prev"},
                             {"direction", "loads", "delta", "c_next"});
      !s.ok()) {
    return BadInput(what, s);
  }
  redistribution::RingInput in;
  const json& dir = (*j)["direction"];
  if (!dir.is_string() || (dir != "uni" && dir != "bi")) {
    return BadInput(what, InvalidArgument("'direction' must be \"uni\" or \"bi\""));
  }
  in.bidirectional = dir == "bi";
  auto loads = Integers((*j)["loads"], "loads");
  if (!loads.ok()) return BadInput(what, loads.status());
  auto delta = Integers((*j)["delta"], "delta");
  if (!delta.ok()) return BadInput(what, delta.status());
  auto c_next = Numbers((*j)["c_next"], "c_next");
  if (!c_next.ok()) return BadInput(what, c_next.status());
  in.loads = std::move(*loads);
  in.delta = std::move(*delta);
  in.c_next = std::move(*c_next);
  if (j->contains("c_prev") && in.bidirectional) {
    auto c_prev = Numbers((*j)["c_prev"], "c_prev");
    if (!c_prev.ok()) return BadInput(what, c_prev.status());
    in.c_prev = std::move(*c_prev);
  }
  if (Status s = redistribution::CheckRingInput(in); !s.ok()) return BadInput(what, s);
  auto plan = redistribution::PlanRing(in);
  if (!plan.ok()) return BadInput(what, plan.status());
  ojson out;
  out["case"] = plan->ring_case;
  out["time"] = plan->time;
  out["lower_bound"] = plan->lower_bound;
  out["optimal"] = plan->optimal;
  out["light"] = plan->light ? ojson(*plan->light) : ojson(nullptr);
  out["transfers"] = ojson::array();
  for (const auto& t : plan->transfers) {
    out["transfers"].push_back(
        {{"from", t.from}, {"to", t.to}, {"items", t.items}, {"start", t.start}, {"end", t.end}});
  }
  std::printf("%s\n", out.dump(2).c_str());
  return 0;
}

int Balance(const std::string& input) {
  const std::string what = "balance";
  auto j = ReadJsonFile(input);
  if (!j.ok()) return BadInput(what, j.status());
  if (Status s =
          CheckFields(*j, input, {"X", "h", "overhead", "threshold", "workstations", "remaining"},
                      {"X", "workstations"});
      !s.ok()) {
    return BadInput(what, s);
  }
  auto x = NumberField(*j, "X", input);
  if (!x.ok()) return BadInput(what, x.status());
  if (*x <= 0) return BadInput(what, InvalidArgument("X must be positive"));
  double h = 1, overhead = 0, threshold = 0;
  for (auto [key, slot] :
       {std::pair{"h", &h}, std::pair{"overhead", &overhead}, std::pair{"threshold", &threshold}}) {
    if (!j->contains(key)) continue;
    auto v = NumberField(*j, key, input);
    if (!v.ok()) return BadInput(what, v.status());
    *slot = *v;
  }
  if (h < 0) return BadInput(what, InvalidArgument("h must not be negative"));
  if (overhead < 0) return BadInput(what, InvalidArgument("overhead must not be negative"));
  std::vector<balance::Workstation> ws;
  if (!(*j)["workstations"].is_array())
    return BadInput(what, InvalidArgument("'workstations' must be an array"));
  for (size_t i = 0; i < (*j)["workstations"].size(); ++i) {
    const json& w = (*j)["workstations"][i];
    const std::string where = input + ": workstations[" + std::to_string(i) + "]";
    if (Status s = CheckFields(w, where, {"mu", "N", "sigma_n"}, {"mu", "N", "sigma_n"}); !s.ok())
      return BadInput(what, s);
    auto mu = NumberField(w, "mu", where);
    auto n = NumberField(w, "N", where);
    auto sd = NumberField(w, "sigma_n", where);
    for (const auto* r : {&mu, &n, &sd}) {
      if (!r->ok()) return BadInput(what, r->status());
    }
    ws.push_back({*mu, *n, *sd});
  }
  if (Status s = balance::CheckWorkstations(ws); !s.ok()) return BadInput(what, s);
  ojson out;
  out["T"] = ojson::array();
  for (const auto& w : ws) out["T"].push_back(balance::ExpectedTime(w, *x));
  out["split"] = {{"S_E", balance::SplitEven(ws, *x)},
                  {"S_M", balance::SplitMeans(ws, *x)},
                  {"S_P", balance::SplitProposed(ws, *x)}};
  if (j->contains("remaining")) {
    auto rem = Numbers((*j)["remaining"], "remaining");
    if (!rem.ok()) return BadInput(what, rem.status());
    if (rem->size() != ws.size()) {
      return BadInput(
          what, InvalidArgument("'remaining' has " + std::to_string(rem->size()) + " entries for " +
                                std::to_string(ws.size()) + " workstations"));
    }
    for (double r : *rem) {
      if (!(r >= 0))
        return BadInput(what, InvalidArgument("'remaining' entries must not be negative"));
    }
    if (std::all_of(rem->begin(), rem->end(), [](double r) { return r == 0; })) {
      return BadInput(what, InvalidArgument("'remaining' is all zero: nothing left to balance"));
    }
    auto step = balance::CheckingPoint(ws, *rem, h, overhead, threshold);
    out["dynamic"] = {
        {"T_rem", step.t_rem}, {"new_remaining", step.new_remaining}, {"T_after", step.t_after},
        {"gain", step.gain},   {"redistribute", step.redistribute},   {"T_check", step.t_check}};
  }
  std::printf("%s\n", out.dump(2).c_str());
  return 0;
}

}  // namespace

CLI::App* AddPlanCommand(CLI::App& app, PlanArgs& args) {
  CLI::App* plan =
      app.add_subcommand("plan", "plan a data migration or a load balance (JSON in, JSON out)");
  plan->require_subcommand(1);
  args.ring = plan->add_subcommand(
      "ring", "ring redistribution plan (Algorithms 1-3, System 2), replayed one-port");
  args.ring->add_option("--input", args.input, "direction, loads, delta, c_next, c_prev (JSON)")
      ->required();
  args.distpm =
      plan->add_subcommand("distpm", "DistPM LP migration plan against the greedy baseline");
  args.distpm->add_option("--input", args.input, "groups, loads, targets, alpha, beta (JSON)")
      ->required();
  args.balance =
      plan->add_subcommand("balance", "Lee & Cho static splits and dynamic checking point");
  args.balance->add_option("--input", args.input, "workstations and job size (JSON)")->required();
  return plan;
}

int PlanCommand(const PlanArgs& args) {
  if (args.ring->parsed()) return Ring(args.input);
  if (args.distpm->parsed()) return DistPm(args.input);
  if (args.balance->parsed()) return Balance(args.input);
  return 2;
}

}  // namespace aiac::spawner
