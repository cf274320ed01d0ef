// One printable line for an exception caught around code that reads peer messages:
// kj::Exception (malformed text in a Cap'n Proto frame), std::exception, or anything else.
#pragma once

#include <exception>
#include <string>

namespace aiac::net {

std::string DescribeException(std::exception_ptr e);

}  // namespace aiac::net
