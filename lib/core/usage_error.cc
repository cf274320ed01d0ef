#include "core/usage_error.h"

#include <cstdio>
#include <set>
#include <string>

#include "core/config.h"

namespace aiac {
namespace {

// The deepest subcommand the command line selected (the app itself when none).
CLI::App* Selected(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands()) return Selected(*sub);
  return &app;
}

std::set<std::string> Flags(const CLI::App& app) {
  std::set<std::string> out;
  for (const CLI::Option* o : app.get_options()) {
    for (const std::string& name : o->get_lnames()) out.insert("--" + name);
  }
  return out;
}

}  // namespace

int UsageError(CLI::App& app, const CLI::ParseError& error, int argc, char** argv) {
  const int code = app.exit(error);  // prints the message (or the help, or the version)
  if (code == 0) return 0;
  CLI::App* selected = Selected(app);
  std::set<std::string> commands;
  for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    commands.insert(sub->get_name());
  const std::set<std::string> flags = Flags(*selected);
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const std::string flag = arg.substr(0, arg.find('='));
    std::optional<std::string> near;
    if (i == 1 && !commands.empty() && !arg.starts_with("-") && !commands.count(arg)) {
      near = Nearest(arg, commands);
    } else if (flag.starts_with("--") && !flags.count(flag) && !Flags(app).count(flag)) {
      near = Nearest(flag, flags);
    }
    if (near) {
      std::fprintf(stderr, "did you mean '%s'?\n", near->c_str());
      break;
    }
  }
  return 2;
}

}  // namespace aiac
