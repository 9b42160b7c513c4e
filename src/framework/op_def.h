// Op definitions: what an op's inputs, outputs and attributes are, and the process-wide
// registry that holds them.
//
// Ops are declared once, next to their kernels, with a compact spec language:
//
//   TW_REGISTER_OP("MatMul")
//       .Input("a: T").Input("b: T").Output("product: T")
//       .Attr("T: {float, double}")
//       .Attr("transpose_a: bool = false").Attr("transpose_b: bool = false")
//       .Doc("Matrix product of a and b.");
//
// Arguments: "name: float" (a fixed type), "name: T" (a type attribute), "name: N * T" (N
// tensors of type T), "name: Tlist" (a list(type) attribute). Attributes: "name: KIND" with
// KIND one of int, float, bool, string, type, shape, tensor, list(type), list(int),
// list(shape); "{float, double}" for a type from a set; ">= N" for a minimum (ints, list
// lengths); "= VALUE" for a default (shape "?" is unknown rank, lists only "[]").
#ifndef TENSORWEAVE_SRC_FRAMEWORK_OP_DEF_H_
#define TENSORWEAVE_SRC_FRAMEWORK_OP_DEF_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "tensorweave/protobuf/graph.pb.h"
#include "tensorweave/status.h"
#include "tensorweave/types.h"

namespace tw {

struct ArgDef {
  std::string name;
  DataType type = DT_INVALID;  // a fixed type, or
  std::string type_attr;       // the type attribute giving it, and
  std::string number_attr;     // for "N * T": the int attribute counting the tensors; or
  std::string type_list_attr;  // a list(type) attribute, one tensor per entry
};

struct AttrDef {
  std::string name;
  std::string kind;  // int, float, bool, string, type, shape, tensor, list(type), ...
  std::optional<proto::AttrValue> default_value;
  std::vector<DataType> allowed_types;  // empty: any
  std::optional<int64_t> minimum;       // ints: value; lists: length
};

struct OpDef {
  std::string name;
  std::vector<ArgDef> inputs;
  std::vector<ArgDef> outputs;
  std::vector<AttrDef> attrs;
  bool is_stateful = false;
  std::string doc;

  const AttrDef* FindAttr(std::string_view attr) const;
};

// Builds an OpDef from spec strings; errors are collected and reported by Finalize().
class OpDefBuilder {
 public:
  explicit OpDefBuilder(std::string name);
  OpDefBuilder& Input(std::string_view spec);
  OpDefBuilder& Output(std::string_view spec);
  OpDefBuilder& Attr(std::string_view spec);
  // Stateful ops are never pruned as duplicates and own or touch resources.
  OpDefBuilder& SetIsStateful();
  OpDefBuilder& Doc(std::string_view doc);

  StatusOr<OpDef> Finalize() const;

 private:
  OpDef def_;
  std::vector<std::string> input_specs_, output_specs_;
  std::vector<std::string> errors_;
};

// The op definitions of this process. Thread-safe.
class OpRegistry {
 public:
  static OpRegistry& Global();

  // AlreadyExists for a second op of the same name.
  Status Register(OpDef def);
  // NotFound: `Op type not registered 'Foo'`.
  StatusOr<const OpDef*> LookUp(std::string_view op) const;
  std::vector<std::string> ListOps() const;

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, std::unique_ptr<OpDef>, std::less<>> ops_ ABSL_GUARDED_BY(mu_);
};

// Fills in default attributes and checks every attribute against `def` (present, right
// kind, allowed type, minimum). InvalidArgument naming the node and the attribute.
Status AddDefaultsAndValidateAttrs(const OpDef& def, proto::NodeDef* node);

// The types of the node's inputs (or outputs), expanding "N * T" and list(type) arguments.
Status ArgTypesForNode(const OpDef& def, const proto::NodeDef& node, bool outputs,
                       std::vector<DataType>* types);

// For each argument, the range [first, first + count) of flattened tensor indices.
Status ArgRangesForNode(const OpDef& def, const proto::NodeDef& node, bool outputs,
                        std::map<std::string, std::pair<int, int>>* ranges);

namespace internal {
// Registers at static-initialization time; a malformed spec is a programming error and
// stops the program with the message.
struct OpDefRegistrar {
  OpDefRegistrar(const OpDefBuilder& builder);  // NOLINT: implicit by design
};
}  // namespace internal

}  // namespace tw

#define TW_OP_CONCAT_INNER(a, b) a##b
#define TW_OP_CONCAT(a, b) TW_OP_CONCAT_INNER(a, b)
#define TW_REGISTER_OP(name)                                                 \
  [[maybe_unused]] static const ::tw::internal::OpDefRegistrar TW_OP_CONCAT( \
      tw_op_registrar_, __COUNTER__) = ::tw::OpDefBuilder(name)

#endif  // TENSORWEAVE_SRC_FRAMEWORK_OP_DEF_H_
