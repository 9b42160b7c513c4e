// Pipelines described as DatasetDefs for the tests of src/data: a dataset op with its
// children and iterator-op inputs, attributes, functions of one int64.
#ifndef TENSORWEAVE_SRC_DATA_DATASET_TEST_UTIL_H_
#define TENSORWEAVE_SRC_DATA_DATASET_TEST_UTIL_H_

#include <functional>
#include <string>
#include <vector>

#include "src/framework/attr_value.h"
#include "tensorweave/ops.h"
#include "tensorweave/protobuf/dataset.pb.h"

namespace tw::data::testing {

inline proto::DatasetDef Op(const std::string& op, std::vector<proto::DatasetDef> children = {},
                            std::vector<int> inputs = {}) {
  proto::DatasetDef d;
  d.set_op(op);
  for (auto& c : children) *d.add_children() = std::move(c);
  for (int i : inputs) d.add_inputs(i);
  return d;
}

template <typename T>
inline proto::DatasetDef With(proto::DatasetDef d, const std::string& name, const T& value) {
  (*d.mutable_attrs())[name] = MakeAttr(value);
  return d;
}

// A function of one int64 argument `x` built by `body`.
inline proto::DatasetFunction Function(const std::function<Output(const Scope&, Output)>& body) {
  Scope s = Scope::NewRootScope();
  auto x = ops::Placeholder(s.WithOpName("x"), DT_INT64);
  Output y = body(s, x);
  proto::DatasetFunction f;
  *f.mutable_graph() = *s.ToGraphDef();
  f.add_args("x");
  f.add_outputs(y.name());
  return f;
}

// Range(start, stop, step) from the iterator op's inputs inputs_at, +1, +2.
inline proto::DatasetDef Range(int inputs_at) {
  return Op("Range", {}, {inputs_at, inputs_at + 1, inputs_at + 2});
}

// int64 scalars, as iterator op inputs.
inline std::vector<Tensor> Ints(std::vector<int64_t> v) {
  std::vector<Tensor> out;
  for (int64_t x : v) out.push_back(Tensor::Scalar(x));
  return out;
}

}  // namespace tw::data::testing

#endif  // TENSORWEAVE_SRC_DATA_DATASET_TEST_UTIL_H_
