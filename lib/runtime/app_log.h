// An app's log (app::Log) written to one of our spdlog loggers, each line prefixed with a tag
// that says whose it is ("job cg-1a2b task 2.1").
#pragma once

#include <memory>
#include <string>

#include "app/app.h"
#include "core/logging.h"

namespace aiac::runtime {

// `log` may be null: the lines then go nowhere.
std::shared_ptr<const app::Log> MakeAppLog(Logger log, std::string tag);

}  // namespace aiac::runtime
