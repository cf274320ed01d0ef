#include "core/config.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <optional>
#include <sstream>

namespace aiac {

namespace {

Status FromParseError(const toml::parse_error& err, const std::string& name) {
  std::ostringstream out;
  out << name << ":" << err.source().begin.line << ": " << err.description();
  return InvalidArgument(out.str());
}

// Levenshtein distance: insertions, deletions and substitutions.
size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::optional<std::string> Nearest(const std::string& typo, const std::set<std::string>& known) {
  std::optional<std::string> best;
  size_t best_distance = 3;
  for (const auto& key : known) {
    const size_t d = EditDistance(typo, key);
    if (d < best_distance) best = key, best_distance = d;
  }
  return best;
}

std::string IntegerRange(int64_t min, int64_t max) {
  return "an integer in " + std::to_string(min) + ".." + std::to_string(max);
}

std::string NumberRange(double min, double max) {
  return "a number in [" + NumberText(min) + ", " + NumberText(max) + "]";
}

std::string ChoiceList(const std::vector<std::string>& choices) {
  std::string out;
  for (size_t i = 0; i < choices.size(); ++i) {
    out += i == 0 ? "" : (i + 1 == choices.size() ? " or " : ", ");
    out += choices[i];
  }
  return out;
}

std::string NumberText(double value) {
  char text[32];
  auto [end, ec] = std::to_chars(text, text + sizeof text, value);
  return ec == std::errc() ? std::string(text, end) : "?";
}

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
  AIAC_ASSIGN_OR_RETURN(auto table, ParseTomlText(text, name));
  return ConfigFile(std::move(table), std::move(name));
}

Result<ConfigFile> ConfigFile::Load(const std::string& path) {
  if (path.empty()) return ConfigFile(toml::table{}, "(defaults)");
  AIAC_ASSIGN_OR_RETURN(auto table, ParseTomlFile(path));
  ConfigFile file(std::move(table), path);
  file.path_ = path;
  return file;
}

Result<ConfigFile> ConfigFile::ParseAs(std::string_view text, const std::string& path) {
  AIAC_ASSIGN_OR_RETURN(auto table, ParseTomlText(text, path));
  ConfigFile file(std::move(table), path);
  file.path_ = path;
  return file;
}

const toml::node* ConfigFile::Find(const std::string& key) {
  asked_.insert(key);
  return table_.get(key);
}

void ConfigFile::Reject(const std::string& key, const std::string& what) {
  if (error_.ok()) error_ = InvalidArgument(name_ + ": option '" + key + "' " + what);
}

void ConfigFile::Get(const std::string& key, std::string& out) {
  if (const toml::node* n = Find(key)) {
    if (auto v = n->value<std::string>())
      out = *v;
    else
      Reject(key, "must be a string");
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

void ConfigFile::GetInteger(const std::string& key, int64_t& out, int64_t min, int64_t max) {
  const toml::node* n = Find(key);
  if (!n) return;
  auto v = n->as_integer();
  if (v && v->get() >= min && v->get() <= max)
    out = v->get();
  else
    Reject(key, "must be " + IntegerRange(min, max));
}

void ConfigFile::GetNumber(const std::string& key, double& out, double min, double max) {
  const toml::node* n = Find(key);
  if (!n) return;
  auto v = n->value<double>();      // integers convert too
  if (v && *v >= min && *v <= max)  // false for nan
    out = *v;
  else
    Reject(key, "must be " + NumberRange(min, max));
}

void ConfigFile::Get(const std::string& key, bool& out) {
  if (const toml::node* n = Find(key)) {
    if (auto v = n->as_boolean())
      out = v->get();
    else
      Reject(key, "must be true or false");
  }
}

void ConfigFile::Get(const std::string& key, std::vector<std::string>& out) {
  const toml::node* n = Find(key);
  if (!n) return;
  const toml::array* arr = n->as_array();
  if (!arr) return Reject(key, "must be an array of strings");
  std::vector<std::string> values;
  for (const toml::node& item : *arr) {
    auto v = item.value<std::string>();
    if (!v) return Reject(key, "must be an array of strings");
    values.push_back(*v);
  }
  out = std::move(values);
}

const toml::table* ConfigFile::GetTable(const std::string& key) {
  const toml::node* n = Find(key);
  if (!n) return nullptr;
  if (const toml::table* table = n->as_table()) return table;
  Reject(key, "must be a table");
  return nullptr;
}

Status ConfigFile::Finish() const {
  if (!error_.ok()) return error_;
  for (const auto& [key, node] : table_) {
    const std::string unknown(key.str());
    if (asked_.count(unknown)) continue;
    std::string message = name_ + ": unknown option '" + unknown + "'";
    if (auto near = Nearest(unknown, asked_)) message += " (did you mean '" + *near + "'?)";
    return InvalidArgument(message);
  }
  return Status::Ok();
}

}  // namespace aiac
