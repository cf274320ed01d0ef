// The frame decoder: any bytes, any split; no crash, no read outside the frame, no amplification.
#include "tests/fuzz/fuzz_frames.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  aiac::fuzz::ForEachMessage(data, size, [](aiac::proto::Envelope::Reader env) {
    (void)env.which();
    (void)env.totalSize();
  });
  return 0;
}
