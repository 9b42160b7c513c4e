// Test-only helpers shared by the array op families' tests (reshape_ops_test.cc,
// fill_ops_test.cc, concat_ops_test.cc, slice_ops_test.cc, gather_scatter_ops_test.cc,
// selection_ops_test.cc).
#ifndef TENSORWEAVE_SRC_OPS_ARRAY_TEST_UTIL_H_
#define TENSORWEAVE_SRC_OPS_ARRAY_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tensorweave/protobuf/graph.pb.h"
#include "tensorweave/tensor.h"
#include "testing/kernel_test_fixture.h"

namespace tw::testing {

using Strings = std::vector<std::string>;

// Runs a one-output kernel.
inline StatusOr<Tensor> RunOne(const NodeBuilder& node, const std::vector<Tensor>& inputs) {
  KernelTest t;
  TW_ASSIGN_OR_RETURN(std::vector<Tensor> out, t.Run(node, inputs));
  if (out.size() != 1) return errors::Internal("expected one output, got ", out.size());
  return out[0];
}

inline std::string Message(const StatusOr<Tensor>& s) { return std::string(s.status().message()); }

template <typename T>
Tensor Vec(const std::vector<T>& v) {
  return Tensor::FromVector<T>(v);
}
inline Tensor I32(const std::vector<int32_t>& v) { return Tensor::FromVector<int32_t>(v); }
inline Tensor I64(const std::vector<int64_t>& v) { return Tensor::FromVector<int64_t>(v); }
inline Tensor Floats(const std::vector<float>& v, const TensorShape& shape) {
  return Tensor::FromVector<float>(v, shape);
}
// 0, 1, 2, ... in `shape`.
inline Tensor Iota(const TensorShape& shape) {
  std::vector<float> v(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  return Tensor::FromVector<float>(v, shape);
}

// The node of `g` named `name`; null when there is none.
inline const proto::NodeDef* FindNode(const proto::GraphDef& g, const std::string& name) {
  for (const proto::NodeDef& n : g.node()) {
    if (n.name() == name) return &n;
  }
  return nullptr;
}

}  // namespace tw::testing

#endif  // TENSORWEAVE_SRC_OPS_ARRAY_TEST_UTIL_H_
