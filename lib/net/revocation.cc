#include "net/revocation.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/hex.h"
#include "core/read_file.h"
#include "core/signed_bytes.h"
#include "net/capnp_bytes.h"

namespace aiac::net {

std::string RevocationBytes(const RevocationList& list) {
  SignedBytes out("aiac-revoked-v1");
  out.Text(list.authority).U64(list.serial).U32(static_cast<uint32_t>(list.keys.size()));
  for (const auto& key : list.keys) out.Text(key);
  return out.bytes();
}

Result<RevocationList> MakeRevocationList(const Ed25519Key& authority, uint64_t serial,
                                          std::vector<std::string> keys) {
  for (const auto& key : keys) {
    if (key.size() != kEd25519PublicKeyBytes) {
      return InvalidArgument("a revoked key must be 32 bytes (64 hex characters)");
    }
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  RevocationList list{authority.PublicKey(), serial, std::move(keys), ""};
  list.signature = authority.Sign(RevocationBytes(list));
  return list;
}

Status VerifyRevocationList(const RevocationList& list,
                            const std::vector<std::string>& authorities) {
  if (std::find(authorities.begin(), authorities.end(), list.authority) == authorities.end()) {
    return Unauthenticated("revocation list " + std::to_string(list.serial) +
                           " is signed by a key that is no trusted authority (" +
                           Hex(list.authority).substr(0, 12) + ")");
  }
  for (const auto& key : list.keys) {
    if (key.size() != kEd25519PublicKeyBytes) {
      return Unauthenticated("revocation list " + std::to_string(list.serial) +
                             " holds a key that is not 32 bytes");
    }
  }
  if (!Ed25519Verify(list.authority, RevocationBytes(list), list.signature)) {
    return Unauthenticated("revocation list " + std::to_string(list.serial) +
                           " does not match its authority's signature");
  }
  return Status::Ok();
}

std::string RevocationJson(const RevocationList& list) {
  nlohmann::ordered_json j;
  j["authority"] = Hex(list.authority);
  j["serial"] = list.serial;
  j["revoked"] = nlohmann::json::array();
  for (const auto& key : list.keys) j["revoked"].push_back(Hex(key));
  j["signature"] = Hex(list.signature);
  return j.dump(2) + "\n";
}

std::string RevocationListsJson(const std::vector<RevocationList>& lists) {
  if (lists.size() == 1) return RevocationJson(lists[0]);
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  for (const auto& list : lists) all.push_back(nlohmann::ordered_json::parse(RevocationJson(list)));
  return all.dump(2) + "\n";
}

namespace {

Result<RevocationList> FromJson(const nlohmann::json& j) {
  if (!j.is_object()) return InvalidArgument("a revocation list must be a JSON object");
  auto hex = [&](const nlohmann::json& v, const std::string& what,
                 size_t bytes) -> Result<std::string> {
    auto raw = v.is_string() ? Unhex(v.get<std::string>()) : std::nullopt;
    if (!raw || raw->size() != bytes) {
      return InvalidArgument("revocation list: '" + what + "' must be " +
                             std::to_string(2 * bytes) + " hex characters");
    }
    return std::move(*raw);
  };
  for (const char* key : {"authority", "serial", "revoked", "signature"}) {
    if (!j.contains(key)) {
      return InvalidArgument(std::string("revocation list: '") + key + "' is missing");
    }
  }
  RevocationList list;
  AIAC_ASSIGN_OR_RETURN(list.authority, hex(j["authority"], "authority", kEd25519PublicKeyBytes));
  if (!j["serial"].is_number_unsigned()) {
    return InvalidArgument("revocation list: 'serial' must be a whole number");
  }
  list.serial = j["serial"].get<uint64_t>();
  if (!j["revoked"].is_array()) {
    return InvalidArgument("revocation list: 'revoked' must be a list of keys");
  }
  for (const auto& key : j["revoked"]) {
    AIAC_ASSIGN_OR_RETURN(std::string raw, hex(key, "revoked", kEd25519PublicKeyBytes));
    list.keys.push_back(std::move(raw));
  }
  AIAC_ASSIGN_OR_RETURN(list.signature, hex(j["signature"], "signature", kEd25519SignatureBytes));
  return list;
}

}  // namespace

Result<RevocationList> ParseRevocationJson(std::string_view text) {
  return FromJson(nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false));
}

Result<std::vector<RevocationList>> LoadRevocationLists(const std::string& path) {
  AIAC_ASSIGN_OR_RETURN(const std::string text, ReadWholeFile(path));
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  std::vector<RevocationList> lists;
  for (const auto& one : j.is_array() ? j : nlohmann::json::array({j})) {
    auto list = FromJson(one);
    if (!list.ok()) return Status(list.status().code(), path + ": " + list.status().message());
    lists.push_back(std::move(*list));
  }
  return lists;
}

void FillRevocationList(const RevocationList& list, proto::RevocationList::Builder out) {
  out.setAuthority(AsBytes(list.authority));
  out.setSerial(list.serial);
  auto keys = out.initKeys(static_cast<unsigned>(list.keys.size()));
  for (unsigned i = 0; i < keys.size(); ++i) keys.set(i, AsBytes(list.keys[i]));
  out.setSignature(AsBytes(list.signature));
}

RevocationList ReadRevocationList(proto::RevocationList::Reader in) {
  RevocationList list;
  list.authority = AsString(in.getAuthority());
  list.serial = in.getSerial();
  for (auto key : in.getKeys()) list.keys.push_back(AsString(key));
  list.signature = AsString(in.getSignature());
  return list;
}

bool RevokedKeys::Contains(std::string_view key) const {
  std::lock_guard lock(mu_);
  if (fixed_.count(std::string(key)) != 0) return true;
  for (const auto& [authority, list] : lists_) {
    if (std::binary_search(list.keys.begin(), list.keys.end(), key)) return true;
  }
  return false;
}

Result<bool> RevokedKeys::Adopt(const RevocationList& list,
                                const std::vector<std::string>& authorities) {
  AIAC_RETURN_IF_ERROR(VerifyRevocationList(list, authorities));
  if (!std::is_sorted(list.keys.begin(), list.keys.end())) {
    return Unauthenticated("revocation list " + std::to_string(list.serial) +
                           " does not hold its keys in order");
  }
  std::lock_guard lock(mu_);
  auto held = lists_.find(list.authority);
  if (held != lists_.end() && held->second.serial >= list.serial) return false;
  lists_[list.authority] = list;
  ++generation_;
  return true;
}

std::vector<RevocationList> RevokedKeys::Lists() const {
  std::lock_guard lock(mu_);
  std::vector<RevocationList> out;
  for (const auto& [authority, list] : lists_) out.push_back(list);
  return out;
}

uint64_t RevokedKeys::generation() const {
  std::lock_guard lock(mu_);
  return generation_;
}

}  // namespace aiac::net
