// Conversion between Tensor and its wire form, tw.proto.TensorProto.
//
// Numeric tensors travel as one `tensor_content` byte string, so encoding and decoding are
// one memcpy each (no per-element loop); string tensors use `string_val`. Decoding checks
// everything that came from the wire and reports InvalidArgument naming the problem.
#ifndef TENSORWEAVE_SRC_CORE_TENSOR_CODING_H_
#define TENSORWEAVE_SRC_CORE_TENSOR_CODING_H_

#include "absl/functional/function_ref.h"
#include "tensorweave/protobuf/tensor.pb.h"
#include "tensorweave/tensor.h"

namespace tw {

// Writes `tensor` into `proto`, replacing its contents. `tensor` must be initialized.
void TensorToProto(const Tensor& tensor, proto::TensorProto* proto);

// InvalidArgument when the dtype is unknown, a dimension is negative, the element count
// overflows, the content has the wrong number of bytes or strings, or a bool byte is not
// 0 or 1.
StatusOr<Tensor> TensorFromProto(const proto::TensorProto& proto);

// The same with a numeric tensor's bytes carried outside the proto (src/rpc appends them to
// the message after its header, so they are never copied into a protobuf string).
// CarriesPayload(dtype): the dtype's bytes travel outside; strings and resource handles stay
// in the proto.
inline bool CarriesPayload(DataType dtype) { return dtype != DT_STRING && dtype != DT_RESOURCE; }
// Writes dtype and shape (and the values of strings and resource handles).
void TensorMetaToProto(const Tensor& tensor, proto::TensorProto* proto);
// `read(dst, n)` fills the tensor's n bytes; called once, only when CarriesPayload and n > 0.
// `available`: the bytes the message has left; a shape needing more is InvalidArgument
// before anything is allocated. Errors as TensorFromProto, and whatever `read` returns.
using ContentReader = absl::FunctionRef<Status(void* dst, size_t bytes)>;
StatusOr<Tensor> TensorFromMetaProto(const proto::TensorProto& meta, size_t available,
                                     ContentReader read);

// An uninitialized tensor of the numeric, non-bool dtype and the shape `meta` describes
// (for bytes that arrive in pieces). InvalidArgument for any other dtype or a bad shape;
// ResourceExhausted when the memory cannot be had.
StatusOr<Tensor> AllocateFromMetaProto(const proto::TensorProto& meta);

// Shape conversions; ShapeFromProto accepts -1 for unknown dimensions.
void ShapeToProto(const TensorShape& shape, proto::TensorShapeProto* proto);
StatusOr<TensorShape> ShapeFromProto(const proto::TensorShapeProto& proto);

}  // namespace tw

#endif  // TENSORWEAVE_SRC_CORE_TENSOR_CODING_H_
