// Conversion between Tensor and its wire form, tw.proto.TensorProto.
//
// Numeric tensors travel as one `tensor_content` byte string, so encoding and decoding are
// one memcpy each (no per-element loop); string tensors use `string_val`. Decoding checks
// everything that came from the wire and reports InvalidArgument naming the problem.
#ifndef TENSORWEAVE_SRC_CORE_TENSOR_CODING_H_
#define TENSORWEAVE_SRC_CORE_TENSOR_CODING_H_

#include "tensorweave/protobuf/tensor.pb.h"
#include "tensorweave/tensor.h"

namespace tw {

// Writes `tensor` into `proto`, replacing its contents. `tensor` must be initialized.
void TensorToProto(const Tensor& tensor, proto::TensorProto* proto);

// InvalidArgument when the dtype is unknown, a dimension is negative, the element count
// overflows, the content has the wrong number of bytes or strings, or a bool byte is not
// 0 or 1.
StatusOr<Tensor> TensorFromProto(const proto::TensorProto& proto);

// Shape conversions; ShapeFromProto accepts -1 for unknown dimensions.
void ShapeToProto(const TensorShape& shape, proto::TensorShapeProto* proto);
StatusOr<TensorShape> ShapeFromProto(const proto::TensorShapeProto& proto);

}  // namespace tw

#endif  // TENSORWEAVE_SRC_CORE_TENSOR_CODING_H_
