#include "checkpoint/proof.h"

#include "core/sha256.h"
#include "core/signed_bytes.h"

namespace aiac::checkpoint {
namespace {

constexpr std::string_view kProofEncoding = "aiac-checkpoint-proof-v1";

std::string Which(const TaskCapability& c) {
  return "capability of daemon " + c.daemon_id + " for task " + std::to_string(c.task) +
         " of job " + c.job + " (incarnation " + std::to_string(c.incarnation) + ")";
}

}  // namespace

std::string CapabilityBytes(const TaskCapability& c) {
  return SignedBytes("aiac-task-capability-v1")
      .Text(c.job)
      .U32(c.task)
      .U64(c.incarnation)
      .Text(c.daemon_id)
      .Text(c.daemon_key)
      .bytes();
}

std::string CheckpointBytes(const Checkpoint& c) {
  return SignedBytes("aiac-checkpoint-v1")
      .Text(c.job)
      .U32(c.task)
      .U64(c.incarnation)
      .U64(c.iteration)
      .Text(Sha256(c.state))
      .bytes();
}

TaskCapability GrantCapability(const Ed25519Key& spawner, std::string job, uint32_t task,
                               uint64_t incarnation, std::string daemon_id,
                               std::string daemon_key) {
  TaskCapability c{std::move(job),        task, incarnation, std::move(daemon_id),
                   std::move(daemon_key), ""};
  c.signature = spawner.Sign(CapabilityBytes(c));
  return c;
}

Status VerifyCapability(const TaskCapability& c, std::string_view spawner_key) {
  if (c.daemon_key.size() != kEd25519PublicKeyBytes) {
    return Unauthenticated(Which(c) + " names no daemon key");
  }
  if (!Ed25519Verify(spawner_key, CapabilityBytes(c), c.signature)) {
    return Unauthenticated(Which(c) + " is not signed by the job's spawner");
  }
  return Status::Ok();
}

CheckpointProof ProveCheckpoint(const Ed25519Key& daemon, const TaskCapability& capability,
                                const Checkpoint& c) {
  return CheckpointProof{capability, daemon.Sign(CheckpointBytes(c))};
}

Status VerifyCheckpoint(const Checkpoint& c, const CheckpointProof& proof,
                        std::string_view spawner_key) {
  const TaskCapability& cap = proof.capability;
  AIAC_RETURN_IF_ERROR(VerifyCapability(cap, spawner_key));
  if (cap.job != c.job || cap.task != c.task || cap.incarnation != c.incarnation) {
    return Unauthenticated(Describe(c) + " comes with the " + Which(cap));
  }
  if (!Ed25519Verify(cap.daemon_key, CheckpointBytes(c), proof.signature)) {
    return Unauthenticated(Describe(c) + " is not signed by daemon " + cap.daemon_id +
                           " (forged or altered)");
  }
  return Status::Ok();
}

std::string EncodeProof(const CheckpointProof& p) {
  const TaskCapability& c = p.capability;
  return SignedBytes(kProofEncoding)
      .Text(c.job)
      .U32(c.task)
      .U64(c.incarnation)
      .Text(c.daemon_id)
      .Text(c.daemon_key)
      .Text(c.signature)
      .Text(p.signature)
      .bytes();
}

Result<CheckpointProof> DecodeProof(std::string_view bytes) {
  FieldReader in(bytes);
  std::string encoding;
  CheckpointProof p;
  TaskCapability& c = p.capability;
  if (!in.Text(encoding) || encoding != kProofEncoding || !in.Text(c.job) || !in.U32(c.task) ||
      !in.U64(c.incarnation) || !in.Text(c.daemon_id) || !in.Text(c.daemon_key) ||
      !in.Text(c.signature) || !in.Text(p.signature) || !in.rest().empty()) {
    return Corruption("damaged checkpoint proof");
  }
  return p;
}

}  // namespace aiac::checkpoint
