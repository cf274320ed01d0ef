// Options declared once: each with its key in the TOML file, its command-line flag, its type,
// default, unit and help text. The file loader, the flags, `--help` and the options tables in
// docs/ (tools/options_doc) all come from the declaration, so they cannot disagree.
//
// A declaration binds to a field of an options struct whose value at that moment is the default:
//
//   DaemonOptions o;
//   OptionSet set;
//   set.Duration("heartbeat_ms", o.heartbeat, "heartbeat period towards the super-node");
//   set.Text("data_dir", o.data_dir, "...").Flag("--data");
//   set.AddFlags(app);          // --heartbeat-ms, --data, ... on a CLI11 app
//   ... parse the command line ...
//   set.Load(config_path);      // the file over the defaults, then the flags over the file
//
// The set keeps pointers to the fields: they must outlive it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/status.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace aiac {

class OptionSet {
 public:
  // What one option is, for --help and the docs' tables.
  struct Info {
    std::string key;       // in the TOML file
    std::string flag;      // "--listen"; empty: the file only
    std::string type;      // "string", "integer", "number", "boolean", "strings", "path", "ms", "s"
    std::string fallback;  // the default, as text
    std::string help;
    std::string section;  // which table of the docs it belongs to
  };

  // An option being declared; its setters return it for chaining.
  class Option {
   public:
    // The flag's name instead of "--" + the key with '-' for '_' (e.g. "--data" for data_dir).
    Option& Flag(std::string name);
    // The file only: no flag (a secret would show in `ps`).
    Option& NoFlag();
    // The default as users read it, when the field's value does not say it ("d-HOST-PORT").
    Option& Default(std::string text);

   private:
    friend class OptionSet;
    Info info_;
    std::function<void(ConfigFile&)> read_;
    // Registers the flag on a CLI11 app; the returned function applies its value, if given.
    std::function<std::function<Status()>(CLI::App&, const std::string& help)> add_flag_;
  };

  OptionSet() = default;

  // Options declared from now on belong to `name`'s table in the docs.
  void Section(std::string name) { section_ = std::move(name); }
  // Options declared from now on have no flag (a job file's keys, say).
  void WithoutFlags() { flags_ = false; }

  Option& Text(const std::string& key, std::string& field, std::string help);
  // One of `choices`.
  Option& Choice(const std::string& key, std::string& field, std::vector<std::string> choices,
                 std::string help);
  // A file: a relative path in the TOML file is taken relative to that file's folder.
  Option& Path(const std::string& key, std::string& field, std::string help);
  Option& List(const std::string& key, std::vector<std::string>& field, std::string help);
  Option& Boolean(const std::string& key, bool& field, std::string help);
  // A finite number in [min, max].
  Option& Number(const std::string& key, double& field, double min, double max, std::string help);
  // An integer in [min, max], of any integral field type.
  template <class Int>
  Option& Integer(const std::string& key, Int& field, int64_t min, int64_t max, std::string help);
  // Milliseconds (an integer in the file and on the command line), 1..kMaxMilliseconds.
  static constexpr int64_t kMaxMilliseconds = ConfigFile::kMaxPositive;
  Option& Duration(const std::string& key, std::chrono::milliseconds& field, std::string help);
  // Milliseconds, min_ms..kMaxMilliseconds (0 when no wait is a meaningful choice).
  Option& Duration(const std::string& key, std::chrono::milliseconds& field, int64_t min_ms,
                   std::string help);
  // Seconds (a number), in [min, max].
  Option& Duration(const std::string& key, std::chrono::duration<double>& field, double min,
                   double max, std::string help);

  // A check on the file's values that the declarations cannot make, run after the file is read
  // and before the flags are applied (e.g. two keys that exclude each other).
  void CheckFile(std::function<Status(const ConfigFile&)> check) {
    file_checks_.push_back(std::move(check));
  }

  // Adds every option's flag to `app` (with its default and unit in the help text).
  void AddFlags(CLI::App& app);
  // Reads every option from `file` (reporting unknown keys), then applies the flags given.
  Status Read(ConfigFile& file);
  // The same from a file's path (empty: no file, defaults and flags only).
  Status Load(const std::string& path);

  // The options of `section` as a markdown table: | key | flag | type | default | meaning |.
  std::string MarkdownTable(const std::string& section) const;

 private:
  Option& Add(Info info, std::function<void(ConfigFile&)> read,
              std::function<std::function<Status()>(CLI::App&, const std::string&)> add_flag);
  Option& AddInteger(const std::string& key, std::function<int64_t()> get,
                     std::function<void(int64_t)> set, int64_t min, int64_t max, std::string help);

  std::string section_;
  bool flags_ = true;
  std::vector<std::unique_ptr<Option>> options_;
  std::vector<std::function<Status(const ConfigFile&)>> file_checks_;
  std::vector<std::function<Status()>> apply_flags_;
};

template <class Int>
OptionSet::Option& OptionSet::Integer(const std::string& key, Int& field, int64_t min, int64_t max,
                                      std::string help) {
  static_assert(std::is_integral_v<Int>);
  return AddInteger(
      key, [&field] { return static_cast<int64_t>(field); },
      [&field](int64_t value) { field = static_cast<Int>(value); }, min, max, std::move(help));
}

}  // namespace aiac
