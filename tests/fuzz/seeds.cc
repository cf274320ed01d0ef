// Writes the fuzzers' seed corpus: real frames of each kind a peer sends, encoded by the same
// code the processes use. Usage: fuzz_seeds DIR (creates DIR/frame, DIR/hello, DIR/message).
#include <filesystem>
#include <fstream>
#include <string>

#include "net/connection.h"

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
