#include "core/status.h"

namespace aiac {

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kInvalidArgument:
      return "invalid argument";
    case StatusCode::kNotFound:
      return "not found";
    case StatusCode::kIoError:
      return "I/O error";
    case StatusCode::kCorruption:
      return "corruption";
    case StatusCode::kUnauthenticated:
      return "unauthenticated";
    case StatusCode::kUnavailable:
      return "unavailable";
    case StatusCode::kTimeout:
      return "timeout";
    case StatusCode::kProtocol:
      return "protocol error";
    case StatusCode::kResourceExhausted:
      return "resource exhausted";
    case StatusCode::kAborted:
      return "aborted";
    case StatusCode::kInternal:
      return "internal";
    case StatusCode::kDiverged:
      return "diverged";
  }
  return "unknown";
}

namespace detail {

void CheckFailed(const char* file, int line, const char* text, const std::string& values) {
  std::fprintf(stderr, "%s:%d: check failed: %s%s\n", file, line, text, values.c_str());
  std::abort();
}

}  // namespace detail

std::string Status::ToString() const {
  if (ok()) return "ok";
  return std::string(StatusCodeName(code_)) + ": " + message_;
}

}  // namespace aiac
