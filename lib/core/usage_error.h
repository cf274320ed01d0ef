// What a program says and returns when its command line does not parse: CLI11's message, then,
// for a mistyped subcommand or flag, the one most likely meant (`did you mean 'run'?`). Exit 2
// for every usage error; 0 for --help and --version, which CLI11 reports the same way.
#pragma once

#include <CLI/CLI.hpp>

namespace aiac {

int UsageError(CLI::App& app, const CLI::ParseError& error, int argc, char** argv);

}  // namespace aiac
