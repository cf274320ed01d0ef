#include "spawner/new_app_command.h"

#include <cstdio>
#include <filesystem>

#include "core/atomic_file.h"
#include "core/status.h"
#include "spawner/app_template.h"

namespace aiac::spawner {
namespace {

// An app's name is a file name, a CMake target's and a job file's `app`: lower-case letters,
// digits and underscores, starting with a letter.
Status CheckAppName(const std::string& name) {
  const bool ok =
      !name.empty() && name.size() <= 64 && name[0] >= 'a' && name[0] <= 'z' &&
      name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") == std::string::npos;
  if (ok) return Status::Ok();
  return InvalidArgument("app name '" + name +
                         "': use lower-case letters, digits and '_', starting with a letter");
}

Status Write(const NewAppArgs& args, std::string& dir) {
  AIAC_RETURN_IF_ERROR(CheckAppName(args.name));
  dir = args.dir.empty() ? args.name : args.dir;
  const auto files = AppTemplate(args.name);
  for (const auto& [file, content] : files) {
    if (std::filesystem::exists(std::filesystem::path(dir) / file)) {
      return InvalidArgument((std::filesystem::path(dir) / file).string() +
                             " exists already: nothing written");
    }
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return IoError("cannot create " + dir + ": " + ec.message());
  for (const auto& [file, content] : files) {
    AIAC_RETURN_IF_ERROR(
        WriteFileAtomically((std::filesystem::path(dir) / file).string(), content));
  }
  return Status::Ok();
}

}  // namespace

CLI::App* AddNewAppCommand(CLI::App& app, NewAppArgs& args) {
  CLI::App* cmd = app.add_subcommand(
      "new-app", "write a buildable app (CMakeLists.txt, NAME.cc, NAME.toml, NAME_local.cc)");
  cmd->add_option("name", args.name, "the app's name (lower-case letters, digits, '_')")
      ->required();
  cmd->add_option("--dir", args.dir, "where to write it (default ./NAME)");
  return cmd;
}

int NewAppCommand(const NewAppArgs& args) {
  std::string dir;
  if (Status s = Write(args, dir); !s.ok()) {
    std::fprintf(stderr, "aiac-spawner: new-app: %s\n", s.message().c_str());
    return 2;
  }
  std::printf(
      "wrote %s/: CMakeLists.txt, %s.cc, %s.toml, %s_local.cc\n"
      "build:  cmake -S %s -B %s/build -DCMAKE_PREFIX_PATH=<aiac's install prefix> && cmake "
      "--build "
      "%s/build\n"
      "run:    aiac-spawner run --local 4 %s/%s.toml\n",
      dir.c_str(), args.name.c_str(), args.name.c_str(), args.name.c_str(), dir.c_str(),
      dir.c_str(), dir.c_str(), dir.c_str(), args.name.c_str());
  return 0;
}

}  // namespace aiac::spawner
