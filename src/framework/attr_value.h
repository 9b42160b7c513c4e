// Reading and writing node attributes (tw.proto.AttrValue) with C++ types.
#ifndef TENSORWEAVE_SRC_FRAMEWORK_ATTR_VALUE_H_
#define TENSORWEAVE_SRC_FRAMEWORK_ATTR_VALUE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tensorweave/protobuf/graph.pb.h"
#include "tensorweave/status.h"
#include "tensorweave/tensor.h"

namespace tw {

// A partial shape: unknown rank, or a rank with dims that may be -1.
struct PartialShape {
  bool unknown_rank = true;
  std::vector<int64_t> dims;

  static PartialShape Unknown() { return {}; }
  static PartialShape Of(std::vector<int64_t> dims) { return {false, std::move(dims)}; }
  // True when `shape` has this rank (if known) and every known dim.
  bool IsCompatibleWith(const TensorShape& shape) const;
  std::string DebugString() const;
  friend bool operator==(const PartialShape&, const PartialShape&) = default;
};

// Builds an AttrValue.
proto::AttrValue MakeAttr(int64_t v);
inline proto::AttrValue MakeAttr(int v) { return MakeAttr(static_cast<int64_t>(v)); }
proto::AttrValue MakeAttr(float v);
proto::AttrValue MakeAttr(bool v);
proto::AttrValue MakeAttr(std::string_view v);
inline proto::AttrValue MakeAttr(const char* v) { return MakeAttr(std::string_view(v)); }
proto::AttrValue MakeAttr(DataType v);
proto::AttrValue MakeAttr(const PartialShape& v);
proto::AttrValue MakeAttr(const Tensor& v);
proto::AttrValue MakeAttr(const std::vector<DataType>& v);
proto::AttrValue MakeAttr(const std::vector<int64_t>& v);
proto::AttrValue MakeAttr(const std::vector<PartialShape>& v);

// Reads attribute `name` of `node`. InvalidArgument naming the node and the attribute when
// it is missing or has another type.
Status GetNodeAttr(const proto::NodeDef& node, std::string_view name, int64_t* v);
Status GetNodeAttr(const proto::NodeDef& node, std::string_view name, int* v);
Status GetNodeAttr(const proto::NodeDef& node, std::string_view name, float* v);
Status GetNodeAttr(const proto::NodeDef& node, std::string_view name, bool* v);
Status GetNodeAttr(const proto::NodeDef& node, std::string_view name, std::string* v);
Status GetNodeAttr(const proto::NodeDef& node, std::string_view name, DataType* v);
Status GetNodeAttr(const proto::NodeDef& node, std::string_view name, PartialShape* v);
Status GetNodeAttr(const proto::NodeDef& node, std::string_view name, Tensor* v);
Status GetNodeAttr(const proto::NodeDef& node, std::string_view name, std::vector<DataType>* v);
Status GetNodeAttr(const proto::NodeDef& node, std::string_view name, std::vector<int64_t>* v);
Status GetNodeAttr(const proto::NodeDef& node, std::string_view name, std::vector<PartialShape>* v);

// The name of the AttrValue's kind: "int", "float", "bool", "string", "type", "shape",
// "tensor", "list(...)" (from the list's first non-empty field, "list" when empty), "none".
std::string AttrValueKind(const proto::AttrValue& v);

// Short text of a value for error messages and DOT labels.
std::string AttrValueSummary(const proto::AttrValue& v);

}  // namespace tw

#endif  // TENSORWEAVE_SRC_FRAMEWORK_ATTR_VALUE_H_
