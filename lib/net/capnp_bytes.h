// Between Cap'n Proto Data fields and std::string bytes, for message builders and readers.
#pragma once

#include <capnp/blob.h>
#include <kj/array.h>

#include <string>
#include <string_view>

namespace aiac::net {

inline std::string AsString(capnp::Data::Reader d) {
  return std::string(reinterpret_cast<const char*>(d.begin()), d.size());
}

// A view of `s` for a Data setter; `s` must outlive the call.
inline kj::ArrayPtr<const kj::byte> AsBytes(std::string_view s) {
  return kj::arrayPtr(reinterpret_cast<const kj::byte*>(s.data()), s.size());
}

}  // namespace aiac::net
