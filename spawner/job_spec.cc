#include "spawner/job_spec.h"

#include <cmath>
#include <filesystem>
#include <sstream>

#include "core/config.h"

namespace aiac::spawner {
namespace {

bool ValidName(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
  }
  return true;
}

// The job's [params], each as text for the app: strings as they are, numbers as a stream prints
// them (integers whole, other numbers to 6 significant digits), booleans as true or false.
Status ReadParams(const std::string& path, const toml::table& params,
                  std::map<std::string, std::string>& out) {
  for (const auto& [pk, pv] : params) {
    std::ostringstream text;
    if (auto s = pv.value_exact<std::string>()) {
      text << *s;
    } else if (auto i = pv.value_exact<int64_t>()) {
      text << *i;
    } else if (auto d = pv.value_exact<double>()) {
      text << *d;
    } else if (auto b = pv.value_exact<bool>()) {
      text << (*b ? "true" : "false");
    } else {
      return InvalidArgument(path + ": 'params." + std::string(pk.str()) +
                             "' must be a string, number or boolean");
    }
    out[std::string(pk.str())] = text.str();
  }
  return Status::Ok();
}

}  // namespace

Result<JobSpec> LoadJobSpec(const std::string& path) {
  if (!std::filesystem::exists(path)) return NotFound("job file " + path + " does not exist");
  auto parsed = ParseTomlFile(path);
  if (!parsed.ok()) return parsed.status();
  const toml::table& t = *parsed;
  auto bad = [&](const std::string& key, const std::string& what) {
    return InvalidArgument(path + ": '" + key + "' " + what);
  };
  JobSpec job;
  for (const auto& [k, v] : t) {
    const std::string key(k.str());
    if (key == "name") {
      auto s = v.value<std::string>();
      if (!s || !ValidName(*s)) return bad(key, "must be 1-64 letters, digits, '-' or '_'");
      job.name = *s;
    } else if (key == "app") {
      auto s = v.value<std::string>();
      if (!s || s->empty()) return bad(key, "must be a non-empty string");
      job.app = *s;
    } else if (key == "tasks") {
      auto n = v.as_integer();
      if (!n || n->get() < 1 || n->get() > 1000000)
        return bad(key, "must be an integer in 1..1000000");
      job.tasks = static_cast<uint32_t>(n->get());
    } else if (key == "timeout_s") {
      auto d = v.value<double>();
      // A deadline past ~30 days overflows nothing but helps no one; inf/nan/1e300 used to
      // overflow the clock and time out at once.
      if (!d || !std::isfinite(*d) || *d <= 0 || *d > kMaxTimeoutSeconds) {
        return bad(key, "must be a number of seconds in (0, " +
                            std::to_string(static_cast<int64_t>(kMaxTimeoutSeconds)) + "]");
      }
      job.timeout_s = *d;
    } else if (key == "backups") {
      auto n = v.as_integer();
      if (!n || n->get() < 0 || n->get() > 16) return bad(key, "must be an integer in 0..16");
      job.backups = static_cast<uint32_t>(n->get());
    } else if (key == "checkpoint_seconds") {
      auto d = v.value<double>();
      if (!d || !std::isfinite(*d) || *d < 0 || *d > 86400)
        return bad(key, "must be a number of seconds in [0, 86400]");
      job.checkpoint_seconds = *d;
    } else if (key == "checkpoint_every") {
      auto n = v.as_integer();
      if (!n || n->get() < 0 || n->get() > 1000000000)
        return bad(key, "must be an integer in 0..1000000000");
      job.checkpoint_every = static_cast<uint64_t>(n->get());
    } else if (key == "plugin") {
      auto s = v.value<std::string>();
      if (!s || s->empty()) return bad(key, "must be a file name");
      job.plugin = *s;
    } else if (key == "params") {
      const toml::table* params = v.as_table();
      if (!params) return bad(key, "must be a table");
      AIAC_RETURN_IF_ERROR(ReadParams(path, *params, job.params));
    } else {
      return bad(
          key,
          "is not a job option (name, app, tasks, timeout_s, plugin, backups, checkpoint_seconds, "
          "checkpoint_every, params)");
    }
  }
  if (job.name.empty()) return bad("name", "is missing");
  job.base_dir = std::filesystem::absolute(path).parent_path().string();
  if (!job.plugin.empty() && job.plugin[0] != '/') job.plugin = job.base_dir + "/" + job.plugin;
  if (job.app.empty()) return bad("app", "is missing");
  return job;
}

}  // namespace aiac::spawner
