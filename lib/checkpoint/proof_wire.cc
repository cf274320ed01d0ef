#include "checkpoint/proof_wire.h"

namespace aiac::checkpoint {
namespace {

std::string Bytes(capnp::Data::Reader d) {
  return std::string(reinterpret_cast<const char*>(d.begin()), d.size());
}

kj::ArrayPtr<const kj::byte> View(const std::string& s) {
  return kj::arrayPtr(reinterpret_cast<const kj::byte*>(s.data()), s.size());
}

}  // namespace

void FillCapability(const TaskCapability& c, proto::TaskCapability::Builder out) {
  out.setJob(c.job);
  out.setTask(c.task);
  out.setIncarnation(c.incarnation);
  out.setDaemonId(c.daemon_id);
  out.setDaemonKey(View(c.daemon_key));
  out.setSignature(View(c.signature));
}

TaskCapability ReadCapability(proto::TaskCapability::Reader in) {
  return TaskCapability{in.getJob().cStr(),       in.getTask(),
                        in.getIncarnation(),      in.getDaemonId().cStr(),
                        Bytes(in.getDaemonKey()), Bytes(in.getSignature())};
}

void FillProof(const CheckpointProof& p, proto::CheckpointProof::Builder out) {
  FillCapability(p.capability, out.initCapability());
  out.setSignature(View(p.signature));
}

CheckpointProof ReadProof(proto::CheckpointProof::Reader in) {
  return CheckpointProof{ReadCapability(in.getCapability()), Bytes(in.getSignature())};
}

}  // namespace aiac::checkpoint
