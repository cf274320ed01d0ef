#include "core/config.h"

#include <cmath>
#include <filesystem>
#include <sstream>

namespace aiac {

namespace {

Status FromParseError(const toml::parse_error& err, const std::string& name) {
  std::ostringstream out;
  out << name << ":" << err.source().begin.line << ": " << err.description();
  return InvalidArgument(out.str());
}

}  // namespace

Result<toml::table> ParseTomlFile(const std::string& path) {
  try {
    return toml::parse_file(path);
  } catch (const toml::parse_error& err) {
    return FromParseError(err, path);
  }
}

Result<toml::table> ParseTomlText(std::string_view text, const std::string& name) {
  try {
    return toml::parse(text, name);
  } catch (const toml::parse_error& err) {
    return FromParseError(err, name);
  }
}

Result<ConfigFile> ConfigFile::Parse(std::string_view text, std::string name) {
  auto table = ParseTomlText(text, name);
  if (!table.ok()) return table.status();
  return ConfigFile(std::move(*table), std::move(name));
}

Result<ConfigFile> ConfigFile::Load(const std::string& path) {
  if (path.empty()) return ConfigFile(toml::table{}, "(defaults)");
  auto table = ParseTomlFile(path);
  if (!table.ok()) return table.status();
  ConfigFile file(std::move(*table), path);
  file.path_ = path;
  return file;
}

const toml::node* ConfigFile::Find(const std::string& key) {
  asked_.insert(key);
  return table_.get(key);
}

void ConfigFile::Fail(const std::string& key, const std::string& what) {
  if (error_.ok()) error_ = InvalidArgument(name_ + ": option '" + key + "' " + what);
}

void ConfigFile::Get(const std::string& key, std::string& out) {
  if (const toml::node* n = Find(key)) {
    if (auto v = n->value<std::string>())
      out = *v;
    else
      Fail(key, "must be a string");
  }
}

void ConfigFile::GetPath(const std::string& key, std::string& out) {
  std::string value;
  Get(key, value);
  if (value.empty()) return;
  std::filesystem::path p(value);
  if (p.is_relative() && !path_.empty()) p = std::filesystem::path(path_).parent_path() / p;
  out = p.string();
}

void ConfigFile::Get(const std::string& key, int64_t& out) {
  if (const toml::node* n = Find(key)) {
    if (auto v = n->as_integer())
      out = v->get();
    else
      Fail(key, "must be an integer");
  }
}

void ConfigFile::GetPositive(const std::string& key, int64_t& out) {
  int64_t before = out;
  Get(key, out);
  if (out <= 0 || out > kMaxPositive) {
    Fail(key, "must be in 1.." + std::to_string(kMaxPositive));
    out = before;
  }
}

void ConfigFile::Get(const std::string& key, double& out) {
  if (const toml::node* n = Find(key)) {
    if (auto v = n->value<double>(); v && std::isfinite(*v))
      out = *v;  // integers convert too
    else
      Fail(key, "must be a finite number");
  }
}

void ConfigFile::Get(const std::string& key, bool& out) {
  if (const toml::node* n = Find(key)) {
    if (auto v = n->as_boolean())
      out = v->get();
    else
      Fail(key, "must be true or false");
  }
}

void ConfigFile::Get(const std::string& key, std::vector<std::string>& out) {
  const toml::node* n = Find(key);
  if (!n) return;
  const toml::array* arr = n->as_array();
  if (!arr) return Fail(key, "must be an array of strings");
  std::vector<std::string> values;
  for (const toml::node& item : *arr) {
    auto v = item.value<std::string>();
    if (!v) return Fail(key, "must be an array of strings");
    values.push_back(*v);
  }
  out = std::move(values);
}

Status ConfigFile::Finish() const {
  if (!error_.ok()) return error_;
  for (const auto& [key, node] : table_) {
    if (!asked_.count(std::string(key.str()))) {
      return InvalidArgument(name_ + ": unknown option '" + std::string(key.str()) + "'");
    }
  }
  return Status::Ok();
}

}  // namespace aiac
