// `aiac-spawner new-app NAME [--dir DIR]`: writes a buildable app skeleton, against the installed
// SDK, to DIR (default ./NAME): CMakeLists.txt (five lines: find_package(aiac), a MODULE
// library linked to aiac::app), NAME.cc (a complete asynchronous Jacobi app,
// spawner/app_template.h), NAME.toml (its job file) and NAME_local.cc (a program that runs
// the app's tasks in one process, app::RunLocally). Never overwrites a file. Errors exit 2
// with one line on stderr.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace aiac::spawner {

struct NewAppArgs {
  std::string name;
  std::string dir;
};

CLI::App* AddNewAppCommand(CLI::App& app, NewAppArgs& args);
int NewAppCommand(const NewAppArgs& args);

}  // namespace aiac::spawner
