#include "core/printable.h"

#include <cstdio>

namespace aiac {

std::string Printable(std::string_view text, size_t max, bool quote) {
  std::string out = quote ? "\"" : "";
  const size_t shown = text.size() < max ? text.size() : max;
  for (size_t i = 0; i < shown; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    switch (c) {
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '"':
        out += quote ? "\\\"" : "\"";
        break;
      case '\\':
        out += quote ? "\\\\" : "\\";
        break;
      default:
        if (c >= 0x20 && c < 0x7f) {
          out += static_cast<char>(c);
        } else {
          char hex[5];
          std::snprintf(hex, sizeof hex, "\\x%02x", c);
          out += hex;
        }
    }
  }
  if (quote) out += '"';
  if (shown < text.size()) out += "...(" + std::to_string(text.size()) + " bytes)";
  return out;
}

}  // namespace aiac
