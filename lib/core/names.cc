#include "core/names.h"

#include <string>

#include "core/printable.h"

namespace aiac {

Status CheckName(std::string_view what, std::string_view name) {
  if (name.empty()) return InvalidArgument(std::string(what) + " is empty");
  if (name.size() > kMaxNameBytes) {
    return InvalidArgument(std::string(what) + " " + Printable(name, 32) + " is longer than " +
                           std::to_string(kMaxNameBytes) + " bytes");
  }
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == ':' || c == '@' || c == '+' || c == '-';
    if (!ok) {
      return InvalidArgument(std::string(what) + " " + Printable(name, 64) +
                             " has a character outside [A-Za-z0-9._:@+-]");
    }
  }
  return Status::Ok();
}

}  // namespace aiac
