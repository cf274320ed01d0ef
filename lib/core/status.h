// Status and Result<T>: how aiac reports failures that can happen at run time (bad input, I/O,
// a disconnected peer, a corrupt checkpoint). Bugs are assertions (see AIAC_CHECK), not statuses.
//
// A Status is a code plus a one-line message meant for a human. `Retryable()` tells a caller
// whether trying again later may succeed (a peer that is down) or never will (bad input).
// Both types are values: cheap to copy, no shared state, safe to pass between coroutines.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace aiac {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,   // the input is wrong; retrying the same input never helps
  kNotFound,          // the thing asked for does not exist
  kIoError,           // a file or device failed
  kCorruption,        // stored or received data does not decode
  kUnauthenticated,   // the peer failed the handshake (wrong key, wrong version)
  kUnavailable,       // a peer is down or not reachable yet: retry may succeed
  kTimeout,           // an operation took longer than allowed: retry may succeed
  kProtocol,          // a peer broke the protocol (unexpected or malformed message)
  kResourceExhausted, // not enough daemons, frame too big, queue full
  kAborted,           // cancelled (shutdown, Ctrl-C)
  kInternal,          // an invariant failed in a dependency
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return {}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // True when the same operation may succeed later without changing its input.
  bool Retryable() const {
    return code_ == StatusCode::kUnavailable || code_ == StatusCode::kTimeout ||
           code_ == StatusCode::kResourceExhausted;
  }
  // "unavailable: connect to 127.0.0.1:7400 refused".
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status IoError(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
inline Status Corruption(std::string m) { return {StatusCode::kCorruption, std::move(m)}; }
inline Status Unauthenticated(std::string m) { return {StatusCode::kUnauthenticated, std::move(m)}; }
inline Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
inline Status Timeout(std::string m) { return {StatusCode::kTimeout, std::move(m)}; }
inline Status ProtocolError(std::string m) { return {StatusCode::kProtocol, std::move(m)}; }
inline Status ResourceExhausted(std::string m) {
  return {StatusCode::kResourceExhausted, std::move(m)};
}
inline Status Aborted(std::string m) { return {StatusCode::kAborted, std::move(m)}; }
inline Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

// Either a value or a non-ok Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT
    if (std::get<Status>(v_).ok()) {
      std::fprintf(stderr, "aiac: Result built from an ok Status\n");
      std::abort();
    }
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace aiac

// Returns the Status from the enclosing function when `expr` is not ok.
#define AIAC_RETURN_IF_ERROR(expr)          \
  do {                                      \
    ::aiac::Status aiac_status_ = (expr);   \
    if (!aiac_status_.ok()) return aiac_status_; \
  } while (0)

// Invariant check: prints the condition and its location, then aborts. For bugs only.
#define AIAC_CHECK(cond)                                                              \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                   \
    }                                                                                 \
  } while (0)
