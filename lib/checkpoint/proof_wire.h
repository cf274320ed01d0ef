// Capabilities and checkpoint proofs (checkpoint/proof.h) in and out of their Cap'n Proto form
// (AssignTask.capability, CheckpointPut.proof, CheckpointGet.capability, CheckpointData.proof).
// Reading never throws on a well-formed message; sizes are checked by the verifications.
#pragma once

#include "checkpoint/proof.h"
#include "proto/aiac.capnp.h"

namespace aiac::checkpoint {

void FillCapability(const TaskCapability& c, proto::TaskCapability::Builder out);
TaskCapability ReadCapability(proto::TaskCapability::Reader in);
void FillProof(const CheckpointProof& p, proto::CheckpointProof::Builder out);
CheckpointProof ReadProof(proto::CheckpointProof::Reader in);

}  // namespace aiac::checkpoint
