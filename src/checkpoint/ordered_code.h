// TensorFlow's "ordered code" (tensorflow/core/lib/strings/ordered_code.h), the encoding
// of a partitioned variable's slice keys in a checkpoint index: bytes that sort as the
// values they encode. Only what slice keys use (EncodeSliceKey below) is here.
//
//   NumIncreasing(n)        one byte with the count of n's big-endian bytes, then them
//                           (0 is the single byte 0x00)
//   String(s)               s with 0x00 written 0x00 0xff and 0xff written 0xff 0x00,
//                           then the terminator 0x00 0x01
//   SignedNumIncreasing(n)  1 to 10 bytes: the length in unary header bits, then n in
//                           two's complement, the header inverted for negative n
//                           (one byte covers [-64, 64): 0 is 0x80, -1 is 0x7f)
// Thread-safe: pure functions.
#ifndef TENSORWEAVE_SRC_CHECKPOINT_ORDERED_CODE_H_
#define TENSORWEAVE_SRC_CHECKPOINT_ORDERED_CODE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tw::checkpoint {

void AppendOrderedNumIncreasing(uint64_t n, std::string* out);
void AppendOrderedString(std::string_view s, std::string* out);
void AppendOrderedSignedNumIncreasing(int64_t n, std::string* out);

// One dimension of a slice, as TensorFlow's TensorSlice holds it: a full dimension is
// start 0 and length -1.
struct SliceExtent {
  int64_t start = 0;
  int64_t length = -1;
};

// The index key of a slice of tensor `name`, as TensorFlow's EncodeTensorNameSlice makes it:
// NumIncreasing(0), String(name), NumIncreasing(rank), then each dimension's start and
// length as SignedNumIncreasing. Keys begin with 0x00, so they sort before every name.
std::string EncodeSliceKey(std::string_view name, const std::vector<SliceExtent>& slice);

}  // namespace tw::checkpoint

#endif  // TENSORWEAVE_SRC_CHECKPOINT_ORDERED_CODE_H_
