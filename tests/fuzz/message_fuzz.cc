// Each message handler's validation, as the super-node and the daemon run it on what an
// authenticated peer sends. Handlers run inside net::Server's guard, which turns a kj::Exception
// from malformed text into one closed connection, so such an exception is a handled outcome
// here; anything else (a crash, a sanitizer report, another exception) is a finding.
#include <kj/exception.h>

#include "checkpoint/proof_wire.h"
#include "core/names.h"
#include "daemon/assignment.h"
#include "net/certificate.h"
#include "net/enrollment_token.h"
#include "net/revocation.h"
#include "supernode/daemon_record.h"
#include "supernode/registry_delta.h"
#include "tests/fuzz/fuzz_frames.h"

namespace {

const std::vector<std::string> kTrusted = {std::string(32, '\x07')};
const std::string kSpawnerKey(32, '\x09');

void Validate(aiac::proto::Envelope::Reader env) {
  using E = aiac::proto::Envelope;
  switch (env.which()) {
    case E::REGISTER:
      (void)aiac::supernode::CheckDaemonRecord(
          aiac::supernode::FromProto(env.getRegister().getDaemon()));
      break;
    case E::REGISTRY_DIGEST: {
      aiac::supernode::PeerRegistry peer;
      peer.Apply(aiac::supernode::ChangesFromDigest(env.getRegistryDigest()),
                 aiac::supernode::PeerRegistry::Clock::now());
      (void)peer.Daemons(aiac::supernode::PeerRegistry::Clock::now());
      break;
    }
    case E::REGISTRY_DELTA: {
      aiac::supernode::PeerRegistry peer;
      const auto now = aiac::supernode::PeerRegistry::Clock::now();
      auto changes = aiac::supernode::ChangesFromProto(env.getRegistryDelta());
      peer.Apply(changes, now);
      changes.full = false;  // and once more, on top of itself
      peer.Apply(std::move(changes), now);
      (void)peer.Daemons(now);
      break;
    }
    case E::REQUEST_DAEMONS:
      (void)aiac::CheckName("job id", env.getRequestDaemons().getJob().cStr());
      break;
    case E::RELEASE_DAEMONS:
      for (auto id : env.getReleaseDaemons().getDaemonIds())
        (void)aiac::CheckName("daemon id", id.cStr());
      break;
    case E::ASSIGN_TASK:
      (void)aiac::daemon::ParseAssignment(env.getAssignTask(), {{}, true}, "d1");
      (void)aiac::daemon::ParseAssignment(env.getAssignTask(), {kTrusted, false}, "d1");
      break;
    case E::DEPENDENCY_DATA: {
      auto d = env.getDependencyData();
      (void)aiac::CheckName("job id", d.getJob().cStr());
      (void)d.getData().size();
      break;
    }
    case E::CHECKPOINT_PUT: {
      auto p = env.getCheckpointPut();
      aiac::checkpoint::Checkpoint c{p.getJob().cStr(), p.getTask(), p.getIncarnation(),
                                     p.getIteration(),  "",          p.getChecksum()};
      (void)aiac::checkpoint::VerifyCheckpoint(c, aiac::checkpoint::ReadProof(p.getProof()),
                                               kSpawnerKey);
      break;
    }
    case E::CHECKPOINT_GET:
      (void)aiac::checkpoint::VerifyCapability(
          aiac::checkpoint::ReadCapability(env.getCheckpointGet().getCapability()), kSpawnerKey);
      break;
    case E::CHECKPOINT_DATA: {
      auto proof = aiac::checkpoint::ReadProof(env.getCheckpointData().getProof());
      (void)aiac::checkpoint::DecodeProof(aiac::checkpoint::EncodeProof(proof));
      break;
    }
    case E::REVOCATIONS: {
      aiac::net::RevokedKeys revoked;
      (void)revoked.Adopt(aiac::net::ReadRevocationList(env.getRevocations()), kTrusted);
      break;
    }
    case E::ENROLL: {
      auto token = aiac::net::DecodeEnrollmentToken(env.getEnroll().getToken().cStr());
      if (token.ok()) (void)aiac::net::VerifyEnrollmentToken(*token, aiac::net::Trust(kTrusted), 0);
      break;
    }
    case E::ENROLLED:
      if (env.getEnrolled().hasCertificate()) {
        (void)aiac::net::VerifyCertificate(
            aiac::net::ReadCertificate(env.getEnrolled().getCertificate()),
            aiac::net::Trust(kTrusted), 0);
      }
      break;
    case E::PLUGIN_DATA:
      (void)env.getPluginData().getSha256().size();
      (void)env.getPluginData().getBytes().size();
      break;
    default:
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  aiac::fuzz::ForEachMessage(data, size, [](aiac::proto::Envelope::Reader env) {
    try {
      Validate(env);
    } catch (const kj::Exception&) {
      // handled by net::Server's guard in the processes
    }
  });
  return 0;
}
