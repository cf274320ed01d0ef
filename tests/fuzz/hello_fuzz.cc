// The handshake's Hello check, with every role as the receiver and with and without an expected
// peer role: any message gives an identity or a Status, never a crash or an exception.
#include "net/hello.h"
#include "tests/fuzz/fuzz_frames.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using aiac::proto::Role;
  aiac::fuzz::ForEachMessage(data, size, [](aiac::proto::Envelope::Reader env) {
    for (Role own : {Role::SUPERNODE, Role::DAEMON, Role::SPAWNER}) {
      (void)aiac::net::ValidateHello(env, own, "d1", std::nullopt);
      (void)aiac::net::ValidateHello(env, own, "sn1", Role::SUPERNODE);
    }
  });
  return 0;
}
