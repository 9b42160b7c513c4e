// Fuzzes the tensor wire form read from the network (src/rpc/tensor_wire.h): any bytes as
// a RunGraph request must decode to tensors that re-encode and decode to the same values,
// or give InvalidArgument (ResourceExhausted for impossible sizes, Unavailable for a
// shared-memory reference, which this process does not accept); never a crash.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "src/rpc/shared_memory.h"
#include "src/rpc/tensor_wire.h"

// Shared memory off: a fuzzed reference must not make the fuzzer open other processes'
// files through /proc (the reference's checks before that are still fuzzed).
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (!tw::shm::TurnOff().ok()) std::abort();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  grpc::Slice slice(data, size);
  grpc::ByteBuffer buffer(&slice, 1);
  tw::RunGraphArgs args;
  tw::Status s = tw::DecodeRunGraphArgs(buffer, &args);
  if (!s.ok()) {
    if (!tw::IsInvalidArgument(s) && !absl::IsResourceExhausted(s) && !tw::IsUnavailable(s)) {
      std::abort();
    }
    return 0;
  }
  tw::RunGraphArgs again;
  if (!tw::DecodeRunGraphArgs(tw::EncodeRunGraphArgs(args), &again).ok()) std::abort();
  if (again.send.size() != args.send.size()) std::abort();
  for (size_t i = 0; i < args.send.size(); ++i) {
    if (again.send[i].name != args.send[i].name) std::abort();
    if (!(again.send[i].tensor == args.send[i].tensor)) std::abort();
  }
  return 0;
}
