// Task capabilities and checkpoint proofs (checkpoint/proof.h): a checkpoint is believed only
// when the job's spawner granted its task and incarnation to the daemon whose key signed its
// very state.
#include "checkpoint/proof.h"

#include <gtest/gtest.h>

#include "support/test_support.h"

namespace aiac::checkpoint {
namespace {

class ProofTest : public ::testing::Test {
 protected:
  ProofTest()
      : spawner_(*Ed25519Key::Generate()),
        daemon_(*Ed25519Key::Generate()),
        capability_(GrantCapability(spawner_, "job", 3, 2, "d7", daemon_.PublicKey())),
        checkpoint_(MakeCheckpoint("job", 3, 2, 40, "the state at 40")),
        proof_(ProveCheckpoint(daemon_, capability_, checkpoint_)) {}

  Ed25519Key spawner_, daemon_;
  TaskCapability capability_;
  Checkpoint checkpoint_;
  CheckpointProof proof_;
};

TEST_F(ProofTest, TheTasksDaemonsCheckpointVerifiesUnderItsSpawner) {
  EXPECT_OK(VerifyCapability(capability_, spawner_.PublicKey()));
  EXPECT_OK(VerifyCheckpoint(checkpoint_, proof_, spawner_.PublicKey()));
  // Another spawner's key: neither.
  const std::string other = Ed25519Key::Generate()->PublicKey();
  EXPECT_FALSE(VerifyCapability(capability_, other).ok());
  EXPECT_FALSE(VerifyCheckpoint(checkpoint_, proof_, other).ok());
}

TEST_F(ProofTest, AnAlteredCheckpointIsRefusedWhateverChanged) {
  std::vector<Checkpoint> altered(5, checkpoint_);
  altered[0].state = "a forged state";
  altered[0].checksum = Crc32c(altered[0].state);  // a recomputed checksum does not help
  altered[1].iteration = 1000;                     // a later iteration, to be restored first
  altered[2].incarnation = 3;                      // passed off as a newer incarnation
  altered[3].task = 4;                             // another task's
  altered[4].job = "other";
  for (const auto& c : altered) {
    Status s = VerifyCheckpoint(c, proof_, spawner_.PublicKey());
    EXPECT_EQ(s.code(), StatusCode::kUnauthenticated) << Describe(c);
  }
}

TEST_F(ProofTest, OnlyTheSpawnersCapabilityAndTheNamedDaemonsKeyCount) {
  // Signed by another daemon under d7's capability.
  Ed25519Key intruder = *Ed25519Key::Generate();
  EXPECT_FALSE(VerifyCheckpoint(checkpoint_, ProveCheckpoint(intruder, capability_, checkpoint_),
                                spawner_.PublicKey())
                   .ok());
  // A capability the intruder granted itself.
  auto self_granted = GrantCapability(intruder, "job", 3, 2, "d9", intruder.PublicKey());
  EXPECT_FALSE(VerifyCheckpoint(checkpoint_, ProveCheckpoint(intruder, self_granted, checkpoint_),
                                spawner_.PublicKey())
                   .ok());
  // Each field of a capability is covered by the spawner's signature.
  std::vector<TaskCapability> changed(5, capability_);
  changed[0].job = "other";
  changed[1].task = 4;
  changed[2].incarnation = 9;
  changed[3].daemon_id = "d9";
  changed[4].daemon_key = intruder.PublicKey();
  for (const auto& c : changed) EXPECT_FALSE(VerifyCapability(c, spawner_.PublicKey()).ok());
}

TEST_F(ProofTest, AProofRoundTripsAsBytesAndDamageIsCorruption) {
  auto decoded = DecodeProof(EncodeProof(proof_));
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_OK(VerifyCheckpoint(checkpoint_, *decoded, spawner_.PublicKey()));
  const std::string bytes = EncodeProof(proof_);
  EXPECT_EQ(DecodeProof(bytes.substr(0, bytes.size() - 1)).status().code(),
            StatusCode::kCorruption);
  EXPECT_EQ(DecodeProof(bytes + "x").status().code(), StatusCode::kCorruption);
  EXPECT_EQ(DecodeProof("").status().code(), StatusCode::kCorruption);
}

}  // namespace
}  // namespace aiac::checkpoint
