// Reading a flat TOML options file into an options struct.
//
// Each process has one options struct with defaults; its parser asks a ConfigFile for each
// known key (the value stays at its default when the key is absent) and finally calls Finish(),
// which reports the first wrong type, bad value or unknown key as one line naming the file and
// the key. Command-line flags are applied after the file, so they override it.
#pragma once

#include <toml++/toml.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/status.h"

namespace aiac {

// Parses a TOML file (or text); a syntax error is one line "FILE:LINE: what".
Result<toml::table> ParseTomlFile(const std::string& path);
Result<toml::table> ParseTomlText(std::string_view text, const std::string& name);

// A number as the shortest text that reads back to it: 0.1, 2592000, 1e-08.
std::string NumberText(double value);

// What an option accepts, as its errors say it: "an integer in 1..100", "a number in [0, 10]",
// "a, b or c".
std::string IntegerRange(int64_t min, int64_t max);
std::string NumberRange(double min, double max);
std::string ChoiceList(const std::vector<std::string>& choices);

// The known name a typo most likely meant: the nearest at most two edits away, if any.
std::optional<std::string> Nearest(const std::string& typo, const std::set<std::string>& known);

class ConfigFile {
 public:
  // Parses `path`; an empty path gives an empty file (all defaults).
  static Result<ConfigFile> Load(const std::string& path);
  // Parses TOML text (for tests); `name` is used in messages.
  static Result<ConfigFile> Parse(std::string_view text, std::string name);
  // Parses `text` as the content of the file `path` (a copy of it kept elsewhere, such as a job
  // file in a spawner's state): messages and relative paths as Load's.
  static Result<ConfigFile> ParseAs(std::string_view text, const std::string& path);

  void Get(const std::string& key, std::string& out);
  void Get(const std::string& key, bool& out);
  void Get(const std::string& key, std::vector<std::string>& out);
  // Milliseconds or counts: at most kMaxPositive (10^12: 31 years in ms, so no clock overflows).
  static constexpr int64_t kMaxPositive = 1000000000000;
  // An integer in [min, max], or a number in [min, max]: "must be an integer in MIN..MAX",
  // "must be a number in [MIN, MAX]"; `out` keeps its value on a problem.
  void GetInteger(const std::string& key, int64_t& out, int64_t min, int64_t max);
  void GetNumber(const std::string& key, double& out, double min, double max);

  // The file's path; empty when there is no file (defaults only, or parsed text).
  const std::string& path() const { return path_; }
  // What messages call it: the path, or "(defaults)", or the name given to Parse.
  const std::string& name() const { return name_; }
  bool Has(const std::string& key) const { return table_.contains(key); }
  // A path option: relative paths are taken relative to the config file's folder.
  void GetPath(const std::string& key, std::string& out);

  // A table (e.g. a job's [params]); null when absent or not a table (then an error).
  const toml::table* GetTable(const std::string& key);

  // Records a problem with `key`'s value: "FILE: option 'KEY' WHAT" (the first one is kept).
  void Reject(const std::string& key, const std::string& what);

  // The first problem met so far, or the first key that no Get asked for.
  Status Finish() const;

 private:
  ConfigFile(toml::table table, std::string name)
      : table_(std::move(table)), name_(std::move(name)) {}
  const toml::node* Find(const std::string& key);

  toml::table table_;
  std::string name_;
  std::string path_;
  std::set<std::string> asked_;
  Status error_;
};

}  // namespace aiac
