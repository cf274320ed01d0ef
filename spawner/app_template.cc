#include "spawner/app_template.h"

namespace aiac::spawner {
namespace {

constexpr const char* kCMakeLists = R"aiac(cmake_minimum_required(VERSION 3.22)
project(@NAME@ CXX)
find_package(aiac REQUIRED)
add_library(aiac_app_@NAME@ MODULE @NAME@.cc)
target_link_libraries(aiac_app_@NAME@ PRIVATE aiac::app)
)aiac";

constexpr const char* kJob =
    R"aiac(# Run with: aiac-spawner run --local 4 @NAME@.toml  (after building into build/)
name = "@NAME@"
app = "@NAME@"
tasks = 4
timeout_s = 120
plugin = "build/libaiac_app_@NAME@.so"

[params]
n = 100000                 # unknowns
tolerance = 1e-10          # a task is locally converged when its largest change is below this
residual_tolerance = 1e-8  # the gathered x is accepted when ||b - A x|| / ||b|| is below this
)aiac";

constexpr const char* kSource =
    R"aiac(// @NAME@: an aiac app. A x = b by asynchronous Jacobi iterations, A = tridiag(-1, 4, -1) of n
// rows and b = A * ones, so that x = ones. Task t owns rows [lo, hi) and needs x[lo - 1] from
// task t - 1 and x[hi] from task t + 1. Every hook and when it is called: docs/app-api.md.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "app/app.h"

namespace {

using aiac::InvalidArgument;
using aiac::Result;
using aiac::Status;
namespace app = aiac::app;

struct Params {
  int64_t n = 100000;
  double tolerance = 1e-10;
  double residual_tolerance = 1e-8;
};

// One parameter's value, or an error naming it.
template <class T>
Status Read(const app::JobParams& p, const char* key, T& out) {
  const std::string* text = p.Find(key);
  if (!text) return Status::Ok();  // the default
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), out);
  if (ec != std::errc() || end != text->data() + text->size() || !(out > 0)) {
    return InvalidArgument(std::string("params.") + key + " must be a positive number, not '" +
                           *text + "'");
  }
  return Status::Ok();
}

Result<Params> ReadParams(const app::JobParams& p) {
  Params out;
  AIAC_RETURN_IF_ERROR(Read(p, "n", out.n));
  AIAC_RETURN_IF_ERROR(Read(p, "tolerance", out.tolerance));
  AIAC_RETURN_IF_ERROR(Read(p, "residual_tolerance", out.residual_tolerance));
  if (out.n < p.tasks) {
    return InvalidArgument("params.n (" + std::to_string(out.n) + ") is smaller than tasks (" +
                           std::to_string(p.tasks) + ")");
  }
  return out;
}

// Rows of task t: as even a split as can be.
int64_t First(int64_t n, uint32_t tasks, uint32_t t) { return n * t / tasks; }

// b = A * ones: 4 minus the neighbours the row has.
double B(int64_t i, int64_t n) { return 4.0 - (i > 0) - (i + 1 < n); }

std::string Pack(const double* v, size_t count) {
  return std::string(reinterpret_cast<const char*>(v), count * sizeof(double));
}

class JacobiTask final : public app::Task {
 public:
  JacobiTask(const Params& p, uint32_t tasks, uint32_t t)
      : n_(p.n),
        tasks_(tasks),
        t_(t),
        lo_(First(p.n, tasks, t)),
        hi_(First(p.n, tasks, t + 1)),
        tolerance_(p.tolerance),
        x_(static_cast<size_t>(hi_ - lo_), 0.0),
        next_(x_.size()) {}

  std::vector<uint32_t> Dependencies() const override {
    std::vector<uint32_t> d;
    if (t_ > 0) d.push_back(t_ - 1);
    if (t_ + 1 < tasks_) d.push_back(t_ + 1);
    return d;
  }

  Status Absorb(uint32_t from, std::string_view bytes) override {
    if (bytes.size() != sizeof(double)) return InvalidArgument("a neighbour's value is 8 bytes");
    std::memcpy(from < t_ ? &left_ : &right_, bytes.data(), sizeof(double));
    fresh_ = true;
    return Status::Ok();
  }

  Result<bool> Iterate() override {
    if (converged() && !fresh_) return false;  // nothing new: wait for input
    fresh_ = false;
    change_ = 0;
    const size_t m = x_.size();
    for (size_t k = 0; k < m; ++k) {
      const double l = k > 0 ? x_[k - 1] : left_, r = k + 1 < m ? x_[k + 1] : right_;
      next_[k] = (B(lo_ + static_cast<int64_t>(k), n_) + l + r) / 4;
      change_ = std::max(change_, std::abs(next_[k] - x_[k]));
    }
    x_.swap(next_);
    if (!std::isfinite(change_)) return aiac::Diverged("the iterate is not finite");
    return true;
  }

  std::vector<app::Outgoing> TakeOutgoing() override {
    std::vector<app::Outgoing> out;
    if (t_ > 0) out.push_back({t_ - 1, Pack(&x_.front(), 1)});
    if (t_ + 1 < tasks_) out.push_back({t_ + 1, Pack(&x_.back(), 1)});
    return out;
  }

  double LocalChange() const override { return change_; }
  bool LocallyConverged() const override { return converged(); }

  // The state is what a restored task needs to go on: its values and its neighbours'. (Not its
  // test: the runtime tightens a restored task to the job's tightening so far.)
  std::string SaveState() const override {
    std::vector<double> s = {left_, right_};
    s.insert(s.end(), x_.begin(), x_.end());
    return Pack(s.data(), s.size());
  }
  Status RestoreState(std::string_view state) override {
    if (state.size() != (x_.size() + 2) * sizeof(double)) {
      return InvalidArgument("a checkpoint of another split");
    }
    std::vector<double> s(x_.size() + 2);
    std::memcpy(s.data(), state.data(), state.size());
    left_ = s[0];
    right_ = s[1];
    std::copy(s.begin() + 2, s.end(), x_.begin());
    change_ = INFINITY;
    return Status::Ok();
  }

  std::string ResultSlice() const override { return Pack(x_.data(), x_.size()); }

  // The gathered x fell short of residual_tolerance although every local test passed.
  Status Tighten(double factor) override {
    if (tolerance_ / factor < 1e-15) {
      return InvalidArgument("the local tolerance would go below what doubles can tell");
    }
    tolerance_ /= factor;
    change_ = INFINITY;
    return Status::Ok();
  }

 private:
  bool converged() const { return change_ < tolerance_; }

  const int64_t n_;
  const uint32_t tasks_, t_;
  const int64_t lo_, hi_;
  double tolerance_;
  std::vector<double> x_, next_;
  double left_ = 0, right_ = 0;  // x[lo - 1] and x[hi] as last received
  double change_ = INFINITY;
  bool fresh_ = true;
};

class JacobiApp final : public app::App {
 public:
  std::string_view name() const override { return "@NAME@"; }

  Result<app::JobPlan> Prepare(const app::JobParams& params) override {
    AIAC_ASSIGN_OR_RETURN(params_, ReadParams(params));
    app::JobPlan plan;
    for (uint32_t t = 0; t < params.tasks; ++t) {
      app::TaskNode node;
      node.cost = static_cast<double>(First(params_.n, params.tasks, t + 1) -
                                      First(params_.n, params.tasks, t));
      if (t > 0) node.edges.push_back({t - 1, 8});
      if (t + 1 < params.tasks) node.edges.push_back({t + 1, 8});
      plan.graph.push_back(node);
    }
    plan.slices.assign(params.tasks, "");  // each task builds its rows from the parameters
    plan.target_change = params_.tolerance;
    return plan;
  }

  Result<std::unique_ptr<app::Task>> MakeTask(const app::JobParams& params, uint32_t task,
                                              std::string_view slice) override {
    AIAC_ASSIGN_OR_RETURN(const Params p, ReadParams(params));
    return std::unique_ptr<app::Task>(new JacobiTask(p, params.tasks, task));
  }

  Result<app::GatherReport> Gather(const app::JobParams& params,
                                   const std::vector<std::string>& slices) override {
    std::vector<double> x;
    for (const std::string& s : slices) {
      const size_t at = x.size();
      x.resize(at + s.size() / sizeof(double));
      if (!s.empty()) std::memcpy(x.data() + at, s.data(), s.size());
    }
    const int64_t n = params_.n;
    if (static_cast<int64_t>(x.size()) != n) return InvalidArgument("the slices are not n values");
    double r2 = 0, b2 = 0, error = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double ax = 4 * x[i] - (i > 0 ? x[i - 1] : 0) - (i + 1 < n ? x[i + 1] : 0);
      r2 += (B(i, n) - ax) * (B(i, n) - ax);
      b2 += B(i, n) * B(i, n);
      error = std::max(error, std::abs(x[i] - 1));
    }
    app::GatherReport report;
    report.residual = std::sqrt(r2 / b2);
    report.residual_target = params_.residual_tolerance;
    report.numbers["max_error"] = error;
    if (!std::isfinite(report.residual)) {
      report.status = app::GatherStatus::kDiverged;
      report.error = "the gathered x is not finite";
    } else if (report.residual > params_.residual_tolerance) {
      report.status = app::GatherStatus::kUnconverged;
      report.error = "the residual " + std::to_string(report.residual) +
                     " is above residual_tolerance";
    }
    return report;
  }

 private:
  Params params_;
};

}  // namespace

AIAC_DEFINE_APP(JacobiApp)
)aiac";

constexpr const char* kLocal =
    R"aiac(// @NAME@'s tasks run in this process with in-memory links (app::RunLocally, docs/app-api.md):
// asynchronously with delays and with every task restored from its checkpoint every 7
// iterations, then synchronously. No cluster needed. Build and run:
//   g++ -O2 @NAME@.cc @NAME@_local.cc -o @NAME@_local $(pkg-config --cflags --libs aiac) && ./@NAME@_local
// (or in CMakeLists.txt: add_executable(@NAME@_local @NAME@.cc @NAME@_local.cc) and
// target_link_libraries(@NAME@_local PRIVATE aiac::app)).
#include <cstdio>
#include <memory>

#include "app/local_run.h"

extern "C" aiac::app::App* aiac_app_create();  // AIAC_DEFINE_APP in @NAME@.cc

int main() {
  for (const bool sync : {false, true}) {
    std::unique_ptr<aiac::app::App> app(aiac_app_create());
    aiac::app::LocalRunOptions options;
    options.tasks = 4;
    options.sync = sync;
    options.restore_every = sync ? 0 : 7;
    options.params = {{"n", "10000"}};
    auto run = aiac::app::RunLocally(*app, options);
    if (!run.ok()) {
      std::fprintf(stderr, "@NAME@: %s\n", run.status().message().c_str());
      return 1;
    }
    const bool converged = run->report.status == aiac::app::GatherStatus::kConverged;
    std::printf("@NAME@ %s: %s, residual %g, %llu restores\n", sync ? "sync" : "async",
                converged ? "converged" : run->report.error.c_str(), run->report.residual,
                static_cast<unsigned long long>(run->restores));
    if (!converged) return 1;
  }
  return 0;
}
)aiac";

std::string Fill(std::string text, const std::string& name) {
  for (size_t at; (at = text.find("@NAME@")) != std::string::npos;) text.replace(at, 6, name);
  return text;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> AppTemplate(const std::string& name) {
  return {{"CMakeLists.txt", Fill(kCMakeLists, name)},
          {name + ".cc", Fill(kSource, name)},
          {name + ".toml", Fill(kJob, name)},
          {name + "_local.cc", Fill(kLocal, name)}};
}

}  // namespace aiac::spawner
