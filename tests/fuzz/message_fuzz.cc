// Each message handler's validation, as the super-node and the daemon run it on what an
// authenticated peer sends. Handlers run inside net::Server's guard, which turns a kj::Exception
// from malformed text into one closed connection, so such an exception is a handled outcome
// here; anything else (a crash, a sanitizer report, another exception) is a finding.
#include <kj/exception.h>

#include "core/names.h"
#include "daemon/assignment.h"
#include "supernode/daemon_record.h"
#include "tests/fuzz/fuzz_frames.h"

namespace {

const std::vector<std::string> kTrusted = {std::string(32, '\x07')};

void Validate(aiac::proto::Envelope::Reader env) {
  using E = aiac::proto::Envelope;
  switch (env.which()) {
    case E::REGISTER:
      (void)aiac::supernode::CheckDaemonRecord(
          aiac::supernode::FromProto(env.getRegister().getDaemon()));
      break;
    case E::REGISTRY_DIGEST:
      for (auto d : env.getRegistryDigest().getDaemons()) (void)aiac::supernode::FromProto(d);
      break;
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
