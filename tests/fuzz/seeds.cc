// Writes the fuzzers' seed corpus: real frames of each kind a peer sends, encoded by the same
// code the processes use. Usage: fuzz_seeds DIR (creates DIR/frame, DIR/hello, DIR/message).
#include <filesystem>
#include <fstream>
#include <string>

#include "checkpoint/proof_wire.h"
#include "net/connection.h"
#include "net/enrollment_token.h"
#include "net/identity.h"
#include "net/revocation.h"

namespace {

using aiac::proto::Envelope;

template <typename Fill>
std::string Frame(Fill fill) {
  capnp::MallocMessageBuilder message;
  fill(message.initRoot<Envelope>());
  auto words = aiac::net::EncodeFrame(message);
  return std::string(reinterpret_cast<const char*>(words.begin()), words.size() * 8);
}

kj::ArrayPtr<const kj::byte> Bytes(const std::string& s) {
  return kj::arrayPtr(reinterpret_cast<const kj::byte*>(s.data()), s.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  namespace fs = std::filesystem;
  const fs::path root = argv[1];
  const std::string hash(32, 'h');
  // Real keys, certificates and proofs: the fuzzers start from signed messages as peers send.
  const aiac::Ed25519Key authority = *aiac::Ed25519Key::Generate();
  const aiac::Ed25519Key enroller = *aiac::Ed25519Key::Generate();
  const aiac::Ed25519Key node = *aiac::Ed25519Key::Generate();
  const auto sn_cert = std::make_shared<const aiac::net::Certificate>(*aiac::net::Certify(
      authority, "sn1", aiac::proto::Role::SUPERNODE, enroller.PublicKey(), 1'900'000'000, true));
  const aiac::net::Certificate enrolled =
      *aiac::net::Certify(enroller, "vol-1", aiac::proto::Role::DAEMON, node.PublicKey(),
                          1'900'000'000, false, sn_cert);
  const auto capability =
      aiac::checkpoint::GrantCapability(authority, "job-1", 0, 1, "vol-1", node.PublicKey());
  const std::vector<std::pair<std::string, std::string>> seeds = {
      {"hello", Frame([](Envelope::Builder e) {
         auto h = e.initHello();
         h.setVersion(aiac::net::kProtocolVersion);
         h.setRole(aiac::proto::Role::DAEMON);
         h.setNodeId("d-host-7401");
       })},
      {"hello-v1", Frame([](Envelope::Builder e) {
         auto h = e.initHello();
         h.setVersion(1);
         h.setRole(aiac::proto::Role::SUPERNODE);
         h.setNodeId("sn1");
         h.setNonce(Bytes(std::string(16, 'n')));
       })},
      {"hello-certified", Frame([&](Envelope::Builder e) {
         auto h = e.initHello();
         h.setVersion(aiac::net::kProtocolVersion);
         h.setRole(aiac::proto::Role::DAEMON);
         h.setNodeId("vol-1");
         aiac::net::FillCertificate(enrolled, h.initCertificate());
         h.setBinding(Bytes(node.Sign(aiac::net::BindingBytes(true, std::string(32, 'x')))));
       })},
      {"hello-enrolling", Frame([&](Envelope::Builder e) {
         auto h = e.initHello();
         h.setVersion(aiac::net::kProtocolVersion);
         h.setRole(aiac::proto::Role::DAEMON);
         h.setNodeId("vol-2");
         h.setEnrollKey(Bytes(node.PublicKey()));
         h.setBinding(Bytes(node.Sign(aiac::net::BindingBytes(true, std::string(32, 'x')))));
       })},
      {"enroll", Frame([&](Envelope::Builder e) {
         e.initEnroll().setToken(aiac::net::EncodeEnrollmentToken(
             *aiac::net::MakeEnrollmentToken(authority, "vol-2", "sn1", 1'900'000'000, 30)));
       })},
      {"enrolled", Frame([&](Envelope::Builder e) {
         aiac::net::FillCertificate(enrolled, e.initEnrolled().initCertificate());
       })},
      {"revocations", Frame([&](Envelope::Builder e) {
         aiac::net::FillRevocationList(
             *aiac::net::MakeRevocationList(authority, 7, {node.PublicKey()}), e.initRevocations());
       })},
      {"checkpoint-put", Frame([&](Envelope::Builder e) {
         auto c = aiac::checkpoint::MakeCheckpoint("job-1", 0, 1, 9, "state");
         auto p = e.initCheckpointPut();
         p.setJob(c.job);
         p.setIncarnation(1);
         p.setIteration(9);
         p.setChecksum(c.checksum);
         p.setState(Bytes(c.state));
         aiac::checkpoint::FillProof(aiac::checkpoint::ProveCheckpoint(node, capability, c),
                                     p.initProof());
       })},
      {"checkpoint-get", Frame([&](Envelope::Builder e) {
         auto g = e.initCheckpointGet();
         g.setJob("job-1");
         aiac::checkpoint::FillCapability(capability, g.initCapability());
       })},
      {"refuse", Frame([](Envelope::Builder e) { e.initRefuse().setReason("wrong key"); })},
      {"register", Frame([](Envelope::Builder e) {
         auto d = e.initRegister().initDaemon();
         d.setId("d1");
         d.setAddress("127.0.0.1:7401");
         d.setCluster("c1");
         d.setPower(2.5);
         d.setCores(4);
       })},
      {"digest", Frame([](Envelope::Builder e) {
         auto g = e.initRegistryDigest();
         g.setSupernodeId("sn2");
         auto list = g.initDaemons(2);
         list[0].setId("d1");
         list[0].setAddress("127.0.0.1:1");
         list[1].setId("d2");
         list[1].setJob("job-1");
       })},
      {"delta", Frame([](Envelope::Builder e) {
         auto g = e.initRegistryDelta();
         g.setSupernodeId("sn2");
         g.setLateMs(2500);
         auto list = g.initDaemons(1);
         list[0].setId("d3");
         list[0].setAddress("127.0.0.1:3");
         list[0].setHeartbeatAgeMs(4000);
         g.initRemoved(1).set(0, "d1");
         g.initEndedJobs(1).set(0, "job-1");
       })},
      {"request", Frame([](Envelope::Builder e) {
         auto r = e.initRequestDaemons();
         r.setRequestId(7);
         r.setJob("cg-0a1b2c");
         r.setCount(8);
       })},
      {"assign", Frame([&](Envelope::Builder e) {
         auto a = e.initAssignTask();
         a.setJob("cg-0a1b2c");
         a.setTask(1);
         a.setTaskCount(4);
         a.setApp("cg");
         a.setPluginHash(Bytes(hash));
         a.setPluginSignature(Bytes(std::string(64, 's')));
         auto p = a.initParams(1);
         p[0].setKey("n");
         p[0].setValue("1000");
         auto n = a.initNeighbours(1);
         n[0].setTask(2);
         n[0].setAddress("127.0.0.1:7402");
         n[0].setDaemonId("d2");
         auto s = a.initSenders(1);
         s[0].setTask(0);
         s[0].setDaemonId("d0");
       })},
      {"dependency", Frame([](Envelope::Builder e) {
         auto d = e.initDependencyData();
         d.setJob("cg-0a1b2c");
         d.setFromTask(0);
         d.setToTask(1);
         d.setIteration(12);
         d.setData(Bytes(std::string(64, 'x')));
       })},
      {"plugin", Frame([&](Envelope::Builder e) {
         auto p = e.initPluginData();
         p.setSha256(Bytes(hash));
         p.setName("libaiac_app_cg.so");
         p.setBytes(
             Bytes("\x7f"
                   "ELF"));
       })},
  };
  for (const char* target : {"frame", "hello", "message"}) {
    fs::create_directories(root / target);
    for (const auto& [name, bytes] : seeds) {
      std::ofstream(root / target / (name + ".bin"), std::ios::binary) << bytes;
    }
  }
  return 0;
}
