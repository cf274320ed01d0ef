#include "net/describe_exception.h"

#include <kj/exception.h>

#include "core/printable.h"

namespace aiac::net {

std::string DescribeException(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const kj::Exception& k) {
    return "malformed message: " + Printable(k.getDescription().cStr(), 200);
  } catch (const std::exception& s) {
    return Printable(s.what(), 200);
  } catch (...) {
    return "unknown exception";
  }
}

}  // namespace aiac::net
