#include "net/identity.h"

#include <filesystem>

#include "core/atomic_file.h"
#include "core/hex.h"

namespace aiac::net {

Result<std::shared_ptr<const NodeIdentity>> MakeNodeIdentity(Ed25519Key key, Certificate cert,
                                                             Trust trust) {
  AIAC_RETURN_IF_ERROR(VerifyCertificate(cert, trust, UnixNow()));
  if (cert.public_key != key.PublicKey()) {
    return InvalidArgument("the certificate of '" + cert.id + "' is for the key " +
                           Hex(cert.public_key).substr(0, 12) + "..., not for this identity key (" +
                           key.PublicHex().substr(0, 12) + "...)");
  }
  return std::make_shared<const NodeIdentity>(
      NodeIdentity{std::move(key), std::move(cert), std::move(trust)});
}

std::shared_ptr<const NodeIdentity> MakeEnrollingIdentity(Ed25519Key key, Trust trust) {
  return std::make_shared<const NodeIdentity>(
      NodeIdentity{std::move(key), Certificate{}, std::move(trust)});
}

Result<Ed25519Key> LoadOrMakeIdentityKey(const std::string& path, bool& made) {
  made = false;
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) return Ed25519Key::Load(path, "identity key");
  AIAC_ASSIGN_OR_RETURN(Ed25519Key key, Ed25519Key::Generate());
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  AIAC_RETURN_IF_ERROR(WriteFileAtomically(path, key.PrivatePem(), 0600));
  made = true;
  return key;
}

Status WriteNewIdentity(const Ed25519Key& authority, const std::string& id, proto::Role role,
                        int64_t expires, const std::string& key_path, const std::string& cert_path,
                        bool enroller) {
  AIAC_ASSIGN_OR_RETURN(Ed25519Key key, Ed25519Key::Generate());
  AIAC_ASSIGN_OR_RETURN(Certificate cert,
                        Certify(authority, id, role, key.PublicKey(), expires, enroller));
  AIAC_RETURN_IF_ERROR(WriteFileAtomically(key_path, key.PrivatePem(), 0600));
  return WriteFileAtomically(cert_path, CertificateJson(cert), 0644);
}

Result<bool> AdoptRevocations(const NodeIdentity& identity, const RevocationList& list,
                              const std::string& keep_in) {
  const Trust& trust = identity.trust;
  AIAC_ASSIGN_OR_RETURN(const bool adopted, trust.revoked->Adopt(list, trust.authorities));
  if (adopted && !keep_in.empty()) {
    AIAC_RETURN_IF_ERROR(WriteFileAtomically(keep_in, RevocationListsJson(trust.revoked->Lists())));
  }
  return adopted;
}

std::string BindingBytes(bool signer_is_client, std::string_view exporter) {
  std::string out = "aiac-hello-v1";
  out.push_back(signer_is_client ? 'c' : 's');
  out.append(exporter);
  return out;
}

}  // namespace aiac::net
