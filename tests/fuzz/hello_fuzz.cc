// The handshake's Hello check, with every role as the receiver, with and without an expected
// peer role, without identities and with a certificate check (enrollment allowed or not): any
// message gives an identity or a Status, never a crash or an exception.
#include "net/certificate.h"
#include "net/hello.h"
#include "tests/fuzz/fuzz_frames.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using aiac::proto::Role;
  static const aiac::net::Trust trust({std::string(32, '\x07')});
  aiac::fuzz::ForEachMessage(data, size, [](aiac::proto::Envelope::Reader env) {
    for (Role own : {Role::SUPERNODE, Role::DAEMON, Role::SPAWNER}) {
      (void)aiac::net::ValidateHello(env, own, "d1", std::nullopt);
      (void)aiac::net::ValidateHello(env, own, "sn1", Role::SUPERNODE);
      for (bool enroll : {false, true}) {
        aiac::net::ChannelCheck check{&trust, std::string(32, 'x'), true, 1'800'000'000, enroll};
        (void)aiac::net::ValidateHello(env, own, "sn1", std::nullopt, &check);
      }
    }
  });
  return 0;
}
