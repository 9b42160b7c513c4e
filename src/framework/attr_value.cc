#include "src/framework/attr_value.h"

#include "absl/strings/str_join.h"
#include "src/core/tensor_coding.h"

namespace tw {

bool PartialShape::IsCompatibleWith(const TensorShape& shape) const {
  if (unknown_rank) return true;
  if (static_cast<int>(dims.size()) != shape.rank()) return false;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] >= 0 && dims[i] != shape.dim(static_cast<int>(i))) return false;
  }
  return true;
}

std::string PartialShape::DebugString() const {
  if (unknown_rank) return "<unknown>";
  std::vector<std::string> parts;
  for (int64_t d : dims) parts.push_back(d < 0 ? "?" : std::to_string(d));
  return "[" + absl::StrJoin(parts, ",") + "]";
}

namespace {

void ShapeToAttrProto(const PartialShape& s, proto::TensorShapeProto* p) {
  p->set_unknown_rank(s.unknown_rank);
  for (int64_t d : s.dims) p->add_dim(d);
}

PartialShape ShapeFromAttrProto(const proto::TensorShapeProto& p) {
  if (p.unknown_rank()) return PartialShape::Unknown();
  return PartialShape::Of(std::vector<int64_t>(p.dim().begin(), p.dim().end()));
}

const proto::AttrValue* Find(const proto::NodeDef& node, std::string_view name) {
  auto it = node.attr().find(std::string(name));
  return it == node.attr().end() ? nullptr : &it->second;
}

Status Missing(const proto::NodeDef& node, std::string_view name) {
  return errors::InvalidArgument("node \"", node.name(), "\" (op ", node.op(),
                                 ") has no attribute \"", name, "\"");
}

Status WrongKind(const proto::NodeDef& node, std::string_view name, std::string_view want,
                 const proto::AttrValue& v) {
  return errors::InvalidArgument("attribute \"", name, "\" of node \"", node.name(), "\" must be ",
                                 want, ", got ", AttrValueKind(v));
}

// Finds `name` and checks its kind; `kind` is the oneof case wanted.
StatusOr<const proto::AttrValue*> Get(const proto::NodeDef& node, std::string_view name,
                                      proto::AttrValue::ValueCase kind, std::string_view want) {
  const proto::AttrValue* v = Find(node, name);
  if (v == nullptr) return Missing(node, name);
  // An empty list is stored with no case set by some writers; accept it for list kinds.
  if (v->value_case() != kind &&
      !(kind == proto::AttrValue::kList && v->value_case() == proto::AttrValue::VALUE_NOT_SET)) {
    return WrongKind(node, name, want, *v);
  }
  return v;
}

}  // namespace

proto::AttrValue MakeAttr(int64_t v) {
  proto::AttrValue a;
  a.set_i(v);
  return a;
}
proto::AttrValue MakeAttr(float v) {
  proto::AttrValue a;
  a.set_f(v);
  return a;
}
proto::AttrValue MakeAttr(bool v) {
  proto::AttrValue a;
  a.set_b(v);
  return a;
}
proto::AttrValue MakeAttr(std::string_view v) {
  proto::AttrValue a;
  a.set_s(std::string(v));
  return a;
}
proto::AttrValue MakeAttr(DataType v) {
  proto::AttrValue a;
  a.set_type(static_cast<proto::DataType>(v));
  return a;
}
proto::AttrValue MakeAttr(const PartialShape& v) {
  proto::AttrValue a;
  ShapeToAttrProto(v, a.mutable_shape());
  return a;
}
proto::AttrValue MakeAttr(const Tensor& v) {
  proto::AttrValue a;
  TensorToProto(v, a.mutable_tensor());
  return a;
}
proto::AttrValue MakeAttr(const std::vector<DataType>& v) {
  proto::AttrValue a;
  a.mutable_list();
  for (DataType t : v) a.mutable_list()->add_type(static_cast<proto::DataType>(t));
  return a;
}
proto::AttrValue MakeAttr(const std::vector<int64_t>& v) {
  proto::AttrValue a;
  a.mutable_list()->mutable_i()->Assign(v.begin(), v.end());
  return a;
}
proto::AttrValue MakeAttr(const std::vector<PartialShape>& v) {
  proto::AttrValue a;
  a.mutable_list();
  for (const PartialShape& s : v) ShapeToAttrProto(s, a.mutable_list()->add_shape());
  return a;
}

Status GetNodeAttr(const proto::NodeDef& node, std::string_view name, int64_t* v) {
  TW_ASSIGN_OR_RETURN(auto a, Get(node, name, proto::AttrValue::kI, "an int"));
  *v = a->i();
  return OkStatus();
}
Status GetNodeAttr(const proto::NodeDef& node, std::string_view name, int* v) {
  int64_t wide = 0;
  TW_RETURN_IF_ERROR(GetNodeAttr(node, name, &wide));
  if (wide < std::numeric_limits<int>::min() || wide > std::numeric_limits<int>::max()) {
    return errors::InvalidArgument("attribute \"", name, "\" of node \"", node.name(), "\" is ",
                                   wide, ", out of range");
  }
  *v = static_cast<int>(wide);
  return OkStatus();
}
Status GetNodeAttr(const proto::NodeDef& node, std::string_view name, float* v) {
  TW_ASSIGN_OR_RETURN(auto a, Get(node, name, proto::AttrValue::kF, "a float"));
  *v = a->f();
  return OkStatus();
}
Status GetNodeAttr(const proto::NodeDef& node, std::string_view name, bool* v) {
  TW_ASSIGN_OR_RETURN(auto a, Get(node, name, proto::AttrValue::kB, "a bool"));
  *v = a->b();
  return OkStatus();
}
Status GetNodeAttr(const proto::NodeDef& node, std::string_view name, std::string* v) {
  TW_ASSIGN_OR_RETURN(auto a, Get(node, name, proto::AttrValue::kS, "a string"));
  *v = a->s();
  return OkStatus();
}
Status GetNodeAttr(const proto::NodeDef& node, std::string_view name, DataType* v) {
  TW_ASSIGN_OR_RETURN(auto a, Get(node, name, proto::AttrValue::kType, "a type"));
  if (!IsValidDataType(a->type())) {
    return errors::InvalidArgument("attribute \"", name, "\" of node \"", node.name(),
                                   "\" is an unknown data type ", static_cast<int>(a->type()));
  }
  *v = static_cast<DataType>(a->type());
  return OkStatus();
}
Status GetNodeAttr(const proto::NodeDef& node, std::string_view name, PartialShape* v) {
  TW_ASSIGN_OR_RETURN(auto a, Get(node, name, proto::AttrValue::kShape, "a shape"));
  *v = ShapeFromAttrProto(a->shape());
  for (int64_t d : v->dims) {
    if (d < -1) {
      return errors::InvalidArgument("attribute \"", name, "\" of node \"", node.name(),
                                     "\" has dimension ", d);
    }
  }
  return OkStatus();
}
Status GetNodeAttr(const proto::NodeDef& node, std::string_view name, Tensor* v) {
  TW_ASSIGN_OR_RETURN(auto a, Get(node, name, proto::AttrValue::kTensor, "a tensor"));
  auto t = TensorFromProto(a->tensor());
  if (!t.ok()) {
    return errors::Annotate(t.status(), internal::StrCatAny("attribute \"", name, "\" of node \"",
                                                            node.name(), "\": "));
  }
  *v = *std::move(t);
  return OkStatus();
}
Status GetNodeAttr(const proto::NodeDef& node, std::string_view name, std::vector<DataType>* v) {
  TW_ASSIGN_OR_RETURN(auto a, Get(node, name, proto::AttrValue::kList, "a list of types"));
  v->clear();
  for (int t : a->list().type()) {
    if (!IsValidDataType(t)) {
      return errors::InvalidArgument("attribute \"", name, "\" of node \"", node.name(),
                                     "\" holds an unknown data type ", t);
    }
    v->push_back(static_cast<DataType>(t));
  }
  return OkStatus();
}
Status GetNodeAttr(const proto::NodeDef& node, std::string_view name, std::vector<int64_t>* v) {
  TW_ASSIGN_OR_RETURN(auto a, Get(node, name, proto::AttrValue::kList, "a list of ints"));
  v->assign(a->list().i().begin(), a->list().i().end());
  return OkStatus();
}
Status GetNodeAttr(const proto::NodeDef& node, std::string_view name,
                   std::vector<PartialShape>* v) {
  TW_ASSIGN_OR_RETURN(auto a, Get(node, name, proto::AttrValue::kList, "a list of shapes"));
  v->clear();
  for (const auto& s : a->list().shape()) v->push_back(ShapeFromAttrProto(s));
  return OkStatus();
}

std::string AttrValueKind(const proto::AttrValue& v) {
  switch (v.value_case()) {
    case proto::AttrValue::kI:
      return "int";
    case proto::AttrValue::kF:
      return "float";
    case proto::AttrValue::kB:
      return "bool";
    case proto::AttrValue::kS:
      return "string";
    case proto::AttrValue::kType:
      return "type";
    case proto::AttrValue::kShape:
      return "shape";
    case proto::AttrValue::kTensor:
      return "tensor";
    case proto::AttrValue::kList: {
      const auto& l = v.list();
      if (l.type_size() > 0) return "list(type)";
      if (l.i_size() > 0) return "list(int)";
      if (l.shape_size() > 0) return "list(shape)";
      if (l.f_size() > 0) return "list(float)";
      if (l.s_size() > 0) return "list(string)";
      if (l.b_size() > 0) return "list(bool)";
      return "list";
    }
    case proto::AttrValue::VALUE_NOT_SET:
      break;
  }
  return "none";
}

std::string AttrValueSummary(const proto::AttrValue& v) {
  switch (v.value_case()) {
    case proto::AttrValue::kI:
      return std::to_string(v.i());
    case proto::AttrValue::kF:
      return std::to_string(v.f());
    case proto::AttrValue::kB:
      return v.b() ? "true" : "false";
    case proto::AttrValue::kS:
      return "\"" + v.s().substr(0, 32) + "\"";
    case proto::AttrValue::kType:
      return std::string(DataTypeName(static_cast<DataType>(v.type())));
    case proto::AttrValue::kShape:
      return ShapeFromAttrProto(v.shape()).DebugString();
    case proto::AttrValue::kTensor: {
      auto t = TensorFromProto(v.tensor());
      return t.ok() ? t->DebugString(4) : "<bad tensor>";
    }
    case proto::AttrValue::kList: {
      std::vector<std::string> parts;
      for (int t : v.list().type()) parts.emplace_back(DataTypeName(static_cast<DataType>(t)));
      for (int64_t i : v.list().i()) parts.push_back(std::to_string(i));
      for (const auto& s : v.list().shape()) parts.push_back(ShapeFromAttrProto(s).DebugString());
      return "[" + absl::StrJoin(parts, ",") + "]";
    }
    case proto::AttrValue::VALUE_NOT_SET:
      break;
  }
  return "";
}

}  // namespace tw
