// Fuzzes tensor decoding: any bytes parsed as a TensorProto must decode to a tensor that
// re-encodes to the same value, or give InvalidArgument; never a crash or a huge allocation.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "src/core/tensor_coding.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tw::proto::TensorProto proto;
  if (!proto.ParseFromArray(data, static_cast<int>(size))) return 0;
  auto tensor = tw::TensorFromProto(proto);
  if (!tensor.ok()) {
    if (!tw::IsInvalidArgument(tensor.status()) && !absl::IsResourceExhausted(tensor.status())) {
      std::abort();  // only these codes are allowed for bad input
    }
    return 0;
  }
  tw::proto::TensorProto again;
  tw::TensorToProto(*tensor, &again);
  auto round_trip = tw::TensorFromProto(again);
  if (!round_trip.ok() || !(*round_trip == *tensor)) std::abort();
  (void)tensor->DebugString();
  return 0;
}
