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
#include <ostream>
#include <sstream>
#include <string>
#include <utility>
#include <variant>

namespace aiac {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,    // the input is wrong; retrying the same input never helps
  kNotFound,           // the thing asked for does not exist
  kIoError,            // a file or device failed
  kCorruption,         // stored or received data does not decode
  kUnauthenticated,    // the peer failed the handshake (wrong key, wrong version)
  kUnavailable,        // a peer is down or not reachable yet: retry may succeed
  kTimeout,            // an operation took longer than allowed: retry may succeed
  kProtocol,           // a peer broke the protocol (unexpected or malformed message)
  kResourceExhausted,  // not enough daemons, frame too big, queue full
  kAborted,            // cancelled (shutdown, Ctrl-C)
  kInternal,           // an invariant failed in a dependency
  kDiverged,           // a computation diverged (non-finite or unbounded values): no retry helps
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

inline Status InvalidArgument(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
inline Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status IoError(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
inline Status Corruption(std::string m) { return {StatusCode::kCorruption, std::move(m)}; }
inline Status Unauthenticated(std::string m) {
  return {StatusCode::kUnauthenticated, std::move(m)};
}
inline Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
inline Status Timeout(std::string m) { return {StatusCode::kTimeout, std::move(m)}; }
inline Status ProtocolError(std::string m) { return {StatusCode::kProtocol, std::move(m)}; }
inline Status ResourceExhausted(std::string m) {
  return {StatusCode::kResourceExhausted, std::move(m)};
}
inline Status Aborted(std::string m) { return {StatusCode::kAborted, std::move(m)}; }
inline Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
inline Status Diverged(std::string m) { return {StatusCode::kDiverged, std::move(m)}; }

// Either a value or a non-ok Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT: implicit by design
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

namespace aiac::detail {

// What a failed check prints: "FILE:LINE: check failed: TEXT", then the compared values.
[[noreturn]] void CheckFailed(const char* file, int line, const char* text,
                              const std::string& values);

template <typename T>
std::string CheckValue(const T& v) {
  if constexpr (requires(std::ostream & o) { o << v; }) {
    std::ostringstream out;
    out << v;
    return out.str();
  } else {
    return "(a value that cannot be printed)";
  }
}

template <typename A, typename B>
std::string CheckValues(const A& a, const B& b) {
  return " (" + CheckValue(a) + " vs " + CheckValue(b) + ")";
}

}  // namespace aiac::detail

// Returns the Status from the enclosing function when `expr` is not ok.
#define AIAC_RETURN_IF_ERROR(expr)               \
  do {                                           \
    ::aiac::Status aiac_status_ = (expr);        \
    if (!aiac_status_.ok()) return aiac_status_; \
  } while (0)

#define AIAC_CONCAT_INNER_(a, b) a##b
#define AIAC_CONCAT_(a, b) AIAC_CONCAT_INNER_(a, b)

// `lhs` takes the value of the Result `rexpr`, or the enclosing function returns its Status:
//   AIAC_ASSIGN_OR_RETURN(auto file, ConfigFile::Load(path));
//   AIAC_ASSIGN_OR_RETURN(options.key, ReadKeyFile(path));
// (In a coroutine, AIAC_CO_ASSIGN_OR_RETURN.) It expands to several statements: under an `if`,
// give it braces.
#define AIAC_ASSIGN_OR_RETURN(lhs, rexpr) \
  AIAC_ASSIGN_OR_RETURN_IMPL_(AIAC_CONCAT_(aiac_result_, __LINE__), lhs, rexpr, return )
#define AIAC_CO_ASSIGN_OR_RETURN(lhs, rexpr) \
  AIAC_ASSIGN_OR_RETURN_IMPL_(AIAC_CONCAT_(aiac_result_, __LINE__), lhs, rexpr, co_return )
#define AIAC_ASSIGN_OR_RETURN_IMPL_(result, lhs, rexpr, ret) \
  auto result = (rexpr);                                     \
  if (!result.ok()) ret result.status();                     \
  lhs = std::move(result).value()

// Invariant check: prints the condition and its location, then aborts. For bugs only.
#define AIAC_CHECK(cond)                                                     \
  do {                                                                       \
    if (!(cond)) ::aiac::detail::CheckFailed(__FILE__, __LINE__, #cond, ""); \
  } while (0)

// Comparisons that print both values when they fail: AIAC_CHECK_EQ(a.size(), b.size()).
#define AIAC_CHECK_OP_(a, op, b)                                                  \
  do {                                                                            \
    const auto& aiac_a_ = (a);                                                    \
    const auto& aiac_b_ = (b);                                                    \
    if (!(aiac_a_ op aiac_b_)) {                                                  \
      ::aiac::detail::CheckFailed(__FILE__, __LINE__, #a " " #op " " #b,          \
                                  ::aiac::detail::CheckValues(aiac_a_, aiac_b_)); \
    }                                                                             \
  } while (0)
#define AIAC_CHECK_EQ(a, b) AIAC_CHECK_OP_(a, ==, b)
#define AIAC_CHECK_NE(a, b) AIAC_CHECK_OP_(a, !=, b)
#define AIAC_CHECK_LT(a, b) AIAC_CHECK_OP_(a, <, b)
#define AIAC_CHECK_LE(a, b) AIAC_CHECK_OP_(a, <=, b)
#define AIAC_CHECK_GT(a, b) AIAC_CHECK_OP_(a, >, b)
#define AIAC_CHECK_GE(a, b) AIAC_CHECK_OP_(a, >=, b)
