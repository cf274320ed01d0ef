#include "core/options.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

namespace aiac {

namespace {

// "--data_dir" → "--data-dir".
std::string FlagFromKey(const std::string& key) {
  std::string flag = "--" + key;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

std::string Quoted(const std::string& text) { return text.empty() ? "none" : "`" + text + "`"; }

std::string ListText(const std::vector<std::string>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? ", \"" : "\"") + values[i] + "\"";
  return out + "]";
}

// "--x must be WHAT, not 'TEXT'".
Status BadFlag(const std::string& flag, const std::string& what, const std::string& text) {
  return InvalidArgument(flag + " must be " + what + ", not '" + text + "'");
}

bool ParseInteger(const std::string& text, int64_t& out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && ptr == end;
}

// A flag's number: finite, in [min, max]; `out` is set only then.
Status ParseNumberFlag(const std::string& flag, const std::string& text, double min, double max,
                       double& out) {
  char* end = nullptr;
  const double value = text.empty() ? NAN : std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !(value >= min && value <= max))
    return BadFlag(flag, NumberRange(min, max), text);
  out = value;
  return Status::Ok();
}

// A flag that takes one value: `apply` gets its text (and the flag's name, for errors) when the
// flag was given.
using FlagApply = std::function<Status(const std::string& flag, const std::string& text)>;
std::function<std::function<Status()>(CLI::App&, const std::string&)> OneValueFlag(
    std::string type_name, FlagApply apply) {
  return [type_name = std::move(type_name), apply = std::move(apply)](
             CLI::App& app, const std::string& flag) -> std::function<Status()> {
    auto text = std::make_shared<std::string>();
    CLI::Option* given = app.add_option(flag, *text)->type_name(type_name);
    return
        [given, text, apply, flag] { return given->count() ? apply(flag, *text) : Status::Ok(); };
  };
}

// The flag's description: the help, then the unit and the default, without the docs' markup.
std::string FlagHelp(const OptionSet::Info& info) {
  std::string help = info.help;
  if (info.type == "ms" || info.type == "s") help += " (" + info.type + ")";
  help += " [default: " + info.fallback + "]";
  help.erase(std::remove(help.begin(), help.end(), '`'), help.end());
  return help;
}

}  // namespace

OptionSet::Option& OptionSet::Option::Flag(std::string name) {
  info_.flag = std::move(name);
  return *this;
}

OptionSet::Option& OptionSet::Option::NoFlag() {
  info_.flag.clear();
  return *this;
}

OptionSet::Option& OptionSet::Option::Default(std::string text) {
  info_.fallback = std::move(text);
  return *this;
}

OptionSet::Option& OptionSet::Add(
    Info info, std::function<void(ConfigFile&)> read,
    std::function<std::function<Status()>(CLI::App&, const std::string&)> add_flag) {
  auto option = std::make_unique<Option>();
  if (flags_) info.flag = FlagFromKey(info.key);
  info.section = section_;
  option->info_ = std::move(info);
  option->read_ = std::move(read);
  option->add_flag_ = std::move(add_flag);
  options_.push_back(std::move(option));
  return *options_.back();
}

OptionSet::Option& OptionSet::Text(const std::string& key, std::string& field, std::string help) {
  return Add(
      {key, "", "string", Quoted(field), std::move(help), ""},
      [key, &field](ConfigFile& file) { file.Get(key, field); },
      OneValueFlag("TEXT", [&field](const std::string&, const std::string& text) {
        field = text;
        return Status::Ok();
      }));
}

OptionSet::Option& OptionSet::Choice(const std::string& key, std::string& field,
                                     std::vector<std::string> choices, std::string help) {
  const std::string what = "one of " + ChoiceList(choices);
  help += " (" + ChoiceList(choices) + ")";
  auto allowed = [choices](const std::string& value) {
    return std::find(choices.begin(), choices.end(), value) != choices.end();
  };
  return Add(
      {key, "", "string", Quoted(field), std::move(help), ""},
      [key, &field, allowed, what](ConfigFile& file) {
        std::string value = field;
        file.Get(key, value);
        if (allowed(value))
          field = value;
        else
          file.Reject(key, "must be " + what + ", not '" + value + "'");
      },
      OneValueFlag("TEXT",
                   [&field, allowed, what](const std::string& flag, const std::string& text) {
                     if (!allowed(text)) return BadFlag(flag, what, text);
                     field = text;
                     return Status::Ok();
                   }));
}

OptionSet::Option& OptionSet::Path(const std::string& key, std::string& field, std::string help) {
  Option& option = Text(key, field, std::move(help));
  option.info_.type = "path";
  option.read_ = [key, &field](ConfigFile& file) { file.GetPath(key, field); };
  return option;
}

OptionSet::Option& OptionSet::List(const std::string& key, std::vector<std::string>& field,
                                   std::string help) {
  return Add(
      {key, "", "strings", ListText(field), std::move(help), ""},
      [key, &field](ConfigFile& file) { file.Get(key, field); },
      [&field](CLI::App& app, const std::string& flag) -> std::function<Status()> {
        auto values = std::make_shared<std::vector<std::string>>();
        // One value per flag, repeated for more (`--supernode A --supernode B`): a list flag
        // does not swallow the positional arguments that follow it.
        CLI::Option* given = app.add_option(flag, *values)->allow_extra_args(false);
        return [given, values, &field] {
          if (given->count()) field = *values;
          return Status::Ok();
        };
      });
}

OptionSet::Option& OptionSet::Boolean(const std::string& key, bool& field, std::string help) {
  return Add(
      {key, "", "boolean", field ? "`true`" : "`false`", std::move(help), ""},
      [key, &field](ConfigFile& file) { file.Get(key, field); },
      OneValueFlag("true|false", [&field](const std::string& flag, const std::string& text) {
        if (text != "true" && text != "false") return BadFlag(flag, "true or false", text);
        field = text == "true";
        return Status::Ok();
      }));
}

OptionSet::Option& OptionSet::Number(const std::string& key, double& field, double min, double max,
                                     std::string help) {
  return Add(
      {key, "", "number", NumberText(field), std::move(help), ""},
      [key, &field, min, max](ConfigFile& file) { file.GetNumber(key, field, min, max); },
      OneValueFlag("NUMBER", [&field, min, max](const std::string& flag, const std::string& text) {
        return ParseNumberFlag(flag, text, min, max, field);
      }));
}

OptionSet::Option& OptionSet::AddInteger(const std::string& key, std::function<int64_t()> get,
                                         std::function<void(int64_t)> set, int64_t min, int64_t max,
                                         std::string help) {
  return Add(
      {key, "", "integer", std::to_string(get()), std::move(help), ""},
      [key, get, set, min, max](ConfigFile& file) {
        int64_t value = get();
        file.GetInteger(key, value, min, max);
        set(value);
      },
      OneValueFlag("INT", [set, min, max](const std::string& flag, const std::string& text) {
        int64_t value = 0;
        if (!ParseInteger(text, value) || value < min || value > max)
          return BadFlag(flag, IntegerRange(min, max), text);
        set(value);
        return Status::Ok();
      }));
}

OptionSet::Option& OptionSet::Duration(const std::string& key, std::chrono::milliseconds& field,
                                       std::string help) {
  return Duration(key, field, 1, std::move(help));
}

OptionSet::Option& OptionSet::Duration(const std::string& key, std::chrono::milliseconds& field,
                                       int64_t min_ms, std::string help) {
  Option& option = AddInteger(
      key, [&field] { return static_cast<int64_t>(field.count()); },
      [&field](int64_t ms) { field = std::chrono::milliseconds(ms); }, min_ms, kMaxMilliseconds,
      std::move(help));
  option.info_.type = "ms";
  return option;
}

OptionSet::Option& OptionSet::Duration(const std::string& key, std::chrono::duration<double>& field,
                                       double min, double max, std::string help) {
  using Seconds = std::chrono::duration<double>;
  return Add(
      {key, "", "s", NumberText(field.count()), std::move(help), ""},
      [key, &field, min, max](ConfigFile& file) {
        double seconds = field.count();
        file.GetNumber(key, seconds, min, max);
        field = Seconds(seconds);
      },
      OneValueFlag("NUMBER", [&field, min, max](const std::string& flag, const std::string& text) {
        double seconds = 0;
        AIAC_RETURN_IF_ERROR(ParseNumberFlag(flag, text, min, max, seconds));
        field = Seconds(seconds);
        return Status::Ok();
      }));
}

void OptionSet::AddFlags(CLI::App& app) {
  for (auto& option : options_) {
    const Info& info = option->info_;
    if (info.flag.empty()) continue;
    std::function<Status()> apply = option->add_flag_(app, info.flag);
    // The help text is set after the option exists: CLI11 takes it from the last add.
    app.get_option(info.flag)->description(FlagHelp(info));
    apply_flags_.push_back(std::move(apply));
  }
}

Status OptionSet::Read(ConfigFile& file) {
  for (auto& option : options_) option->read_(file);
  AIAC_RETURN_IF_ERROR(file.Finish());
  for (auto& check : file_checks_) AIAC_RETURN_IF_ERROR(check(file));
  for (auto& apply : apply_flags_) AIAC_RETURN_IF_ERROR(apply());
  return Status::Ok();
}

Status OptionSet::Load(const std::string& path) {
  AIAC_ASSIGN_OR_RETURN(ConfigFile file, ConfigFile::Load(path));
  return Read(file);
}

std::string OptionSet::MarkdownTable(const std::string& section) const {
  bool flags = false;
  for (const auto& option : options_)
    flags |= option->info_.section == section && !option->info_.flag.empty();
  std::string out = flags ? "| key | flag | type | default | meaning |\n|---|---|---|---|---|\n"
                          : "| key | type | default | meaning |\n|---|---|---|---|\n";
  for (const auto& option : options_) {
    const Info& info = option->info_;
    if (info.section != section) continue;
    std::string help = info.help;
    for (size_t at = help.find('|'); at != std::string::npos; at = help.find('|', at + 2))
      help.replace(at, 1, "\\|");
    out += "| `" + info.key + "` | ";
    if (flags) out += (info.flag.empty() ? "" : "`" + info.flag + "`") + " | ";
    out += info.type + " | " + info.fallback + " | " + help + " |\n";
  }
  return out;
}

}  // namespace aiac
