#include "src/framework/op_def.h"

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_join.h"
#include "src/base/strings.h"
#include "src/framework/attr_value.h"

namespace tw {
namespace {

const std::vector<std::string>& AttrKinds() {
  static const auto* kinds =
      new std::vector<std::string>{"int",   "float",  "bool",       "string",    "type",
                                   "shape", "tensor", "list(type)", "list(int)", "list(shape)"};
  return *kinds;
}

// Parses a default value written in a spec.
StatusOr<proto::AttrValue> ParseDefault(const std::string& kind, std::string_view text) {
  if (kind == "int") {
    int64_t v = 0;
    const bool neg = !text.empty() && text[0] == '-';
    std::optional<int> parsed = ParseNonNegativeInt(neg ? text.substr(1) : text);
    if (!parsed) return errors::InvalidArgument("bad int default \"", text, "\"");
    v = neg ? -*parsed : *parsed;
    return MakeAttr(v);
  }
  if (kind == "float") return MakeAttr(std::strtof(std::string(text).c_str(), nullptr));
  if (kind == "bool") {
    if (text == "true") return MakeAttr(true);
    if (text == "false") return MakeAttr(false);
    return errors::InvalidArgument("bad bool default \"", text, "\"");
  }
  if (kind == "string") {
    if (text.size() >= 2 && text.front() == '\'' && text.back() == '\'') {
      text = text.substr(1, text.size() - 2);
    }
    return MakeAttr(text);
  }
  if (kind == "type") {
    TW_ASSIGN_OR_RETURN(DataType t, DataTypeFromName(text));
    return MakeAttr(t);
  }
  if (kind == "shape" && text == "?") return MakeAttr(PartialShape::Unknown());
  if (kind.starts_with("list(") && text == "[]") {
    proto::AttrValue v;
    v.mutable_list();
    return v;
  }
  return errors::InvalidArgument("unsupported default \"", text, "\" for a ", kind);
}

StatusOr<AttrDef> ParseAttrSpec(std::string_view spec) {
  AttrDef attr;
  const size_t colon = spec.find(':');
  if (colon == std::string_view::npos) return errors::InvalidArgument("no ':' in \"", spec, "\"");
  attr.name = std::string(StripWhitespace(spec.substr(0, colon)));
  std::string_view rest = StripWhitespace(spec.substr(colon + 1));
  std::optional<std::string_view> default_text;
  if (const size_t eq = rest.find('=');
      eq != std::string_view::npos && (eq == 0 || rest[eq - 1] != '>')) {
    default_text = StripWhitespace(rest.substr(eq + 1));
    rest = StripWhitespace(rest.substr(0, eq));
  }
  if (const size_t ge = rest.find(">="); ge != std::string_view::npos) {
    std::optional<int> min = ParseNonNegativeInt(StripWhitespace(rest.substr(ge + 2)));
    if (!min) return errors::InvalidArgument("bad minimum in \"", spec, "\"");
    attr.minimum = *min;
    rest = StripWhitespace(rest.substr(0, ge));
  }
  if (rest.starts_with("{")) {
    if (!rest.ends_with("}")) return errors::InvalidArgument("unclosed '{' in \"", spec, "\"");
    attr.kind = "type";
    for (std::string_view t : Split(rest.substr(1, rest.size() - 2), ',')) {
      TW_ASSIGN_OR_RETURN(DataType dt, DataTypeFromName(StripWhitespace(t)));
      attr.allowed_types.push_back(dt);
    }
  } else {
    attr.kind = std::string(rest);
    if (std::find(AttrKinds().begin(), AttrKinds().end(), attr.kind) == AttrKinds().end()) {
      return errors::InvalidArgument("unknown attribute kind \"", attr.kind, "\" in \"", spec,
                                     "\"");
    }
  }
  if (default_text) {
    TW_ASSIGN_OR_RETURN(attr.default_value, ParseDefault(attr.kind, *default_text));
  }
  return attr;
}

StatusOr<ArgDef> ParseArgSpec(const OpDef& def, std::string_view spec) {
  ArgDef arg;
  const size_t colon = spec.find(':');
  if (colon == std::string_view::npos) return errors::InvalidArgument("no ':' in \"", spec, "\"");
  arg.name = std::string(StripWhitespace(spec.substr(0, colon)));
  std::string_view type = StripWhitespace(spec.substr(colon + 1));
  if (const size_t star = type.find('*'); star != std::string_view::npos) {
    arg.number_attr = std::string(StripWhitespace(type.substr(0, star)));
    type = StripWhitespace(type.substr(star + 1));
    const AttrDef* n = def.FindAttr(arg.number_attr);
    if (n == nullptr || n->kind != "int") {
      return errors::InvalidArgument("\"", spec, "\" needs an int attribute \"", arg.number_attr,
                                     "\"");
    }
  }
  if (const AttrDef* a = def.FindAttr(type); a != nullptr) {
    if (a->kind == "type") {
      arg.type_attr = a->name;
    } else if (a->kind == "list(type)" && arg.number_attr.empty()) {
      arg.type_list_attr = a->name;
    } else {
      return errors::InvalidArgument("\"", spec, "\" refers to attribute \"", type, "\" of kind ",
                                     a->kind);
    }
    return arg;
  }
  auto fixed = DataTypeFromName(type);
  if (!fixed.ok()) {
    return errors::InvalidArgument("\"", spec, "\": \"", type,
                                   "\" is neither a data type nor a type attribute");
  }
  arg.type = *fixed;
  return arg;
}

}  // namespace

const AttrDef* OpDef::FindAttr(std::string_view attr) const {
  for (const AttrDef& a : attrs) {
    if (a.name == attr) return &a;
  }
  return nullptr;
}

OpDefBuilder::OpDefBuilder(std::string name) { def_.name = std::move(name); }

OpDefBuilder& OpDefBuilder::Input(std::string_view spec) {
  input_specs_.emplace_back(spec);
  return *this;
}
OpDefBuilder& OpDefBuilder::Output(std::string_view spec) {
  output_specs_.emplace_back(spec);
  return *this;
}
OpDefBuilder& OpDefBuilder::Attr(std::string_view spec) {
  auto attr = ParseAttrSpec(spec);
  if (attr.ok()) {
    def_.attrs.push_back(*std::move(attr));
  } else {
    errors_.emplace_back(attr.status().message());
  }
  return *this;
}
OpDefBuilder& OpDefBuilder::SetIsStateful() {
  def_.is_stateful = true;
  return *this;
}
OpDefBuilder& OpDefBuilder::Doc(std::string_view doc) {
  def_.doc = std::string(doc);
  return *this;
}

StatusOr<OpDef> OpDefBuilder::Finalize() const {
  std::vector<std::string> problems = errors_;
  OpDef def = def_;
  for (const std::string& spec : input_specs_) {
    auto arg = ParseArgSpec(def, spec);
    if (arg.ok())
      def.inputs.push_back(*arg);
    else
      problems.emplace_back(arg.status().message());
  }
  for (const std::string& spec : output_specs_) {
    auto arg = ParseArgSpec(def, spec);
    if (arg.ok())
      def.outputs.push_back(*arg);
    else
      problems.emplace_back(arg.status().message());
  }
  if (!problems.empty()) {
    return errors::InvalidArgument("op ", def.name, ": ", absl::StrJoin(problems, "; "));
  }
  return def;
}

OpRegistry& OpRegistry::Global() {
  static auto* registry = new OpRegistry();
  return *registry;
}

Status OpRegistry::Register(OpDef def) {
  absl::MutexLock lock(&mu_);
  const std::string name = def.name;
  if (!ops_.emplace(name, std::make_unique<OpDef>(std::move(def))).second) {
    return errors::AlreadyExists("op ", name, " is registered twice");
  }
  return OkStatus();
}

StatusOr<const OpDef*> OpRegistry::LookUp(std::string_view op) const {
  absl::MutexLock lock(&mu_);
  auto it = ops_.find(op);
  if (it == ops_.end()) return errors::NotFound("Op type not registered '", op, "'");
  return it->second.get();
}

std::vector<std::string> OpRegistry::ListOps() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> names;
  for (const auto& [name, def] : ops_) names.push_back(name);
  return names;
}

Status AddDefaultsAndValidateAttrs(const OpDef& def, proto::NodeDef* node) {
  auto& attrs = *node->mutable_attr();
  for (const AttrDef& a : def.attrs) {
    auto it = attrs.find(a.name);
    if (it == attrs.end()) {
      if (!a.default_value) {
        return errors::InvalidArgument("node \"", node->name(), "\" (op ", def.name,
                                       ") is missing attribute \"", a.name, "\"");
      }
      it = attrs.emplace(a.name, *a.default_value).first;
    }
    const proto::AttrValue& v = it->second;
    const std::string kind = AttrValueKind(v);
    const bool list_ok = a.kind.starts_with("list(") && (kind == "list" || kind == a.kind);
    if (kind != a.kind && !list_ok) {
      return errors::InvalidArgument("attribute \"", a.name, "\" of node \"", node->name(),
                                     "\" must be ", a.kind, ", got ", kind);
    }
    if (!a.allowed_types.empty()) {
      const auto t = static_cast<DataType>(v.type());
      if (std::find(a.allowed_types.begin(), a.allowed_types.end(), t) == a.allowed_types.end()) {
        std::vector<std::string> names;
        for (DataType d : a.allowed_types) names.emplace_back(DataTypeName(d));
        return errors::InvalidArgument("attribute \"", a.name, "\" of node \"", node->name(),
                                       "\" (op ", def.name, ") is ", DataTypeName(t),
                                       ", not one of ", absl::StrJoin(names, ", "));
      }
    }
    if (a.minimum) {
      int64_t value = a.kind == "int"          ? v.i()
                      : a.kind == "list(type)" ? v.list().type_size()
                      : a.kind == "list(int)"  ? v.list().i_size()
                                               : v.list().shape_size();
      if (value < *a.minimum) {
        return errors::InvalidArgument("attribute \"", a.name, "\" of node \"", node->name(),
                                       "\" is ", value, ", below the minimum ", *a.minimum);
      }
    }
  }
  for (const auto& [name, value] : attrs) {
    if (def.FindAttr(name) == nullptr && !name.starts_with("_")) {
      return errors::InvalidArgument("node \"", node->name(), "\" has attribute \"", name,
                                     "\", which op ", def.name, " does not have");
    }
  }
  return OkStatus();
}

namespace {
// Number of tensors and their types for one argument of `node`.
Status ExpandArg(const ArgDef& arg, const proto::NodeDef& node, std::vector<DataType>* types) {
  if (!arg.type_list_attr.empty()) {
    std::vector<DataType> list;
    TW_RETURN_IF_ERROR(GetNodeAttr(node, arg.type_list_attr, &list));
    types->insert(types->end(), list.begin(), list.end());
    return OkStatus();
  }
  DataType t = arg.type;
  if (!arg.type_attr.empty()) TW_RETURN_IF_ERROR(GetNodeAttr(node, arg.type_attr, &t));
  int64_t n = 1;
  if (!arg.number_attr.empty()) TW_RETURN_IF_ERROR(GetNodeAttr(node, arg.number_attr, &n));
  if (n < 0 || n > 1'000'000) {
    return errors::InvalidArgument("node \"", node.name(), "\": attribute \"", arg.number_attr,
                                   "\" is ", n);
  }
  types->insert(types->end(), static_cast<size_t>(n), t);
  return OkStatus();
}
}  // namespace

Status ArgTypesForNode(const OpDef& def, const proto::NodeDef& node, bool outputs,
                       std::vector<DataType>* types) {
  types->clear();
  for (const ArgDef& arg : outputs ? def.outputs : def.inputs) {
    TW_RETURN_IF_ERROR(ExpandArg(arg, node, types));
  }
  return OkStatus();
}

Status ArgRangesForNode(const OpDef& def, const proto::NodeDef& node, bool outputs,
                        std::map<std::string, std::pair<int, int>>* ranges) {
  ranges->clear();
  std::vector<DataType> types;
  for (const ArgDef& arg : outputs ? def.outputs : def.inputs) {
    const int first = static_cast<int>(types.size());
    TW_RETURN_IF_ERROR(ExpandArg(arg, node, &types));
    (*ranges)[arg.name] = {first, static_cast<int>(types.size())};
  }
  return OkStatus();
}

namespace internal {
OpDefRegistrar::OpDefRegistrar(const OpDefBuilder& builder) {
  auto def = builder.Finalize();
  Status s = def.ok() ? OpRegistry::Global().Register(*std::move(def)) : def.status();
  if (!s.ok()) {
    std::fprintf(stderr, "tensorweave: bad op registration: %s\n",
                 std::string(s.message()).c_str());
    std::abort();
  }
}
}  // namespace internal

}  // namespace tw
