// Reading a flat TOML options file into an options struct.
//
// Each process has one options struct with defaults; its parser asks a ConfigFile for each
// known key (the value stays at its default when the key is absent) and finally calls Finish(),
// which reports the first wrong type, bad value or unknown key as one line naming the file and
// the key. Command-line flags are applied after the file, so they override it.
#pragma once

#include <toml++/toml.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/status.h"

namespace aiac {

// Parses a TOML file (or text); a syntax error is one line "FILE:LINE: what".
Result<toml::table> ParseTomlFile(const std::string& path);
Result<toml::table> ParseTomlText(std::string_view text, const std::string& name);

class ConfigFile {
 public:
  // Parses `path`; an empty path gives an empty file (all defaults).
  static Result<ConfigFile> Load(const std::string& path);
  // Parses TOML text (for tests); `name` is used in messages.
  static Result<ConfigFile> Parse(std::string_view text, std::string name);

  void Get(const std::string& key, std::string& out);
  void Get(const std::string& key, int64_t& out);
  void Get(const std::string& key, double& out);  // finite numbers only
  void Get(const std::string& key, bool& out);
  void Get(const std::string& key, std::vector<std::string>& out);
  // Milliseconds or counts: 1..kMaxPositive (10^12: 31 years in ms, so no clock overflows).
  static constexpr int64_t kMaxPositive = 1000000000000;
  void GetPositive(const std::string& key, int64_t& out);

  // The file's path; empty when there is no file (defaults only, or parsed text).
  const std::string& path() const { return path_; }
  // A path option: relative paths are taken relative to the config file's folder.
  void GetPath(const std::string& key, std::string& out);

  // The first problem met so far, or the first key that no Get asked for.
  Status Finish() const;

 private:
  ConfigFile(toml::table table, std::string name)
      : table_(std::move(table)), name_(std::move(name)) {}
  const toml::node* Find(const std::string& key);
  void Fail(const std::string& key, const std::string& what);

  toml::table table_;
  std::string name_;
  std::string path_;
  std::set<std::string> asked_;
  Status error_;
};

}  // namespace aiac
