#include "src/saved_model/meta_graph_export.h"

#include <algorithm>
#include <deque>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/text_format.h"
#include "src/checkpoint/checkpoint_file.h"
#include "src/saved_model/graph_export.h"

namespace tw::saved_model {
namespace {

// The GraphDef version written: a producer whose ops all exist in TensorFlow 1.x and
// none of them deprecated (TensorFlow refuses a deprecated op only from the version that
// deprecated it on).
constexpr int kGraphProducer = 27;

// "node:1" -> "node"; "^node" -> "node".
std::string NodeOf(std::string_view input) {
  if (!input.empty() && input[0] == '^') input.remove_prefix(1);
  return std::string(input.substr(0, input.find(':')));
}

tfproto::AttrValue TypeAttr(DataType t) {
  tfproto::AttrValue v;
  v.set_type(static_cast<proto::DataType>(t));
  return v;
}

tfproto::TensorShapeProto ShapeOf(const PartialShape& shape) {
  tfproto::TensorShapeProto out;
  if (shape.unknown_rank) {
    out.set_unknown_rank(true);
  } else {
    for (int64_t d : shape.dims) out.add_dim()->set_size(d);
  }
  return out;
}

// Builds the nodes of the saver subgraph, in TensorFlow's ops.
class SaverBuilder {
 public:
  SaverBuilder(std::string scope, tfproto::GraphDef* graph)
      : scope_(std::move(scope)), graph_(graph) {}

  tfproto::NodeDef* Node(const std::string& name, const std::string& op,
                         std::vector<std::string> inputs = {}) {
    tfproto::NodeDef* n = graph_->add_node();
    n->set_name(scope_ + "/" + name);
    n->set_op(op);
    for (auto& input : inputs) n->add_input(std::move(input));
    return n;
  }

  std::string StringConst(const std::string& name, const std::vector<std::string>& values,
                          bool scalar = false) {
    tfproto::NodeDef* n = Node(name, "Const");
    (*n->mutable_attr())["dtype"] = TypeAttr(DT_STRING);
    tfproto::TensorProto* t = (*n->mutable_attr())["value"].mutable_tensor();
    t->set_dtype(proto::DT_STRING);
    if (!scalar)
      t->mutable_tensor_shape()->add_dim()->set_size(static_cast<int64_t>(values.size()));
    for (const std::string& v : values) t->add_string_val(v);
    return n->name();
  }

  proto::SaverDef Build(const std::vector<VariableSpec>& vars) {
    std::vector<const VariableSpec*> sorted;
    for (const VariableSpec& v : vars) sorted.push_back(&v);
    std::stable_sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) {
      return a->checkpoint_name < b->checkpoint_name;
    });
    std::vector<std::string> names, slices;
    tfproto::AttrValue dtypes;
    for (const VariableSpec* v : sorted) {
      names.push_back(v->checkpoint_name);
      slices.push_back(SliceSpec(*v));
      dtypes.mutable_list()->add_type(static_cast<proto::DataType>(v->dtype));
    }
    // The file name: a placeholder with a default, as TensorFlow's Saver makes it.
    const std::string input = StringConst("filename/input", {"model"}, /*scalar=*/true);
    for (const char* name : {"filename", "Const"}) {
      tfproto::NodeDef* n = Node(name, "PlaceholderWithDefault",
                                 {name == std::string("filename") ? input : scope_ + "/filename"});
      (*n->mutable_attr())["dtype"] = TypeAttr(DT_STRING);
      (*n->mutable_attr())["shape"].mutable_shape();
    }
    const std::string filename = scope_ + "/Const";
    std::vector<std::string> save_inputs = {filename, StringConst("SaveV2/tensor_names", names),
                                            StringConst("SaveV2/shape_and_slices", slices)};
    for (size_t i = 0; i < sorted.size(); ++i) {
      tfproto::NodeDef* read =
          Node(absl::StrCat("Read_", i, "/ReadVariableOp"), "ReadVariableOp", {sorted[i]->node});
      (*read->mutable_attr())["dtype"] = TypeAttr(sorted[i]->dtype);
      save_inputs.push_back(read->name());
    }
    tfproto::NodeDef* save = Node("SaveV2", "SaveV2", std::move(save_inputs));
    (*save->mutable_attr())["dtypes"] = dtypes;
    tfproto::NodeDef* done = Node("control_dependency", "Identity", {filename, "^" + save->name()});
    (*done->mutable_attr())["T"] = TypeAttr(DT_STRING);
    (*done->mutable_attr())["_class"].mutable_list()->add_s("loc:@" + filename);

    tfproto::NodeDef* restore = Node("RestoreV2", "RestoreV2",
                                     {filename, StringConst("RestoreV2/tensor_names", names),
                                      StringConst("RestoreV2/shape_and_slices", slices)});
    (*restore->mutable_attr())["dtypes"] = dtypes;
    std::vector<std::string> assigns;
    for (size_t i = 0; i < sorted.size(); ++i) {
      const std::string suffix = i == 0 ? "" : absl::StrCat("_", i);
      tfproto::NodeDef* value =
          Node("Identity" + suffix, "Identity",
               {i == 0 ? restore->name() : absl::StrCat(restore->name(), ":", i)});
      (*value->mutable_attr())["T"] = TypeAttr(sorted[i]->dtype);
      tfproto::NodeDef* assign =
          Node("AssignVariableOp" + suffix, "AssignVariableOp", {sorted[i]->node, value->name()});
      (*assign->mutable_attr())["dtype"] = TypeAttr(sorted[i]->dtype);
      assigns.push_back("^" + assign->name());
    }
    Node("restore_all", "NoOp", std::move(assigns));

    proto::SaverDef def;
    def.set_filename_tensor_name(filename + ":0");
    def.set_save_tensor_name(done->name() + ":0");
    def.set_restore_op_name(scope_ + "/restore_all");
    def.set_max_to_keep(5);
    def.set_keep_checkpoint_every_n_hours(10000.0f);
    def.set_version(2);  // SaverDef.V2
    return def;
  }

 private:
  // TensorFlow's slice spec of a part: the full shape, then "start,length" per dimension.
  static std::string SliceSpec(const VariableSpec& v) {
    if (v.full_shape.empty()) return "";
    std::vector<std::string> extents;
    for (size_t d = 0; d < v.full_shape.size(); ++d) {
      extents.push_back(d == 0 ? absl::StrCat(v.row_offset, ",", v.shape.empty() ? 1 : v.shape[0])
                               : absl::StrCat(0, ",", v.full_shape[d]));
    }
    return absl::StrCat(absl::StrJoin(v.full_shape, " "), " ", absl::StrJoin(extents, ":"));
  }

  const std::string scope_;
  tfproto::GraphDef* graph_;
};

}  // namespace

StatusOr<tfproto::MetaGraphDef> ExportMetaGraph(const proto::GraphDef& graph,
                                                const MetaGraphSpec& spec) {
  absl::flat_hash_map<std::string, const proto::NodeDef*> by_name;
  for (const proto::NodeDef& n : graph.node()) by_name[n.name()] = &n;
  // What serving needs: the signatures' tensors, the variables and the main op, and all
  // they depend on.
  std::deque<std::string> pending;
  auto need = [&](const std::string& node, const std::string& why) -> Status {
    if (!by_name.contains(node)) {
      return errors::InvalidArgument("SavedModel export: ", why, " names node \"", node,
                                     "\", which is not in the graph");
    }
    pending.push_back(node);
    return OkStatus();
  };
  for (const SignatureSpec& s : spec.signatures) {
    for (const auto* list : {&s.inputs, &s.outputs}) {
      for (const TensorSpec& t : *list) {
        TW_RETURN_IF_ERROR(
            need(NodeOf(t.name), absl::StrCat("signature \"", s.key, "\" tensor \"", t.key, "\"")));
      }
    }
  }
  for (const VariableSpec& v : spec.variables) {
    TW_RETURN_IF_ERROR(need(v.node, absl::StrCat("variable \"", v.checkpoint_name, "\"")));
  }
  if (!spec.main_op.empty()) TW_RETURN_IF_ERROR(need(NodeOf(spec.main_op), "the main op"));
  for (const AssetSpec& a : spec.assets) {
    TW_RETURN_IF_ERROR(need(NodeOf(a.tensor), absl::StrCat("asset \"", a.filename, "\"")));
  }
  absl::flat_hash_set<std::string> kept;
  while (!pending.empty()) {
    std::string name = std::move(pending.front());
    pending.pop_front();
    if (!kept.insert(name).second) continue;
    for (const std::string& input : by_name.at(name)->input()) {
      const std::string node = NodeOf(input);
      if (!by_name.contains(node)) {
        return errors::InvalidArgument("SavedModel export: node ", name, " has input ", input,
                                       ", which is not in the graph");
      }
      pending.push_back(node);
    }
  }

  // TensorFlow's AssignVariableOp has no output: a kept node may wait for an Assign, not
  // take its value.
  for (const std::string& name : kept) {
    for (const std::string& input : by_name.at(name)->input()) {
      if (!input.starts_with("^") && by_name.at(NodeOf(input))->op() == "Assign") {
        return errors::Unimplemented("SavedModel export: node ", name, " takes the value of ",
                                     "Assign node ", NodeOf(input),
                                     "; TensorFlow's "
                                     "AssignVariableOp gives none (read the variable instead)");
      }
    }
  }
  tfproto::MetaGraphDef meta;
  tfproto::GraphDef* out = meta.mutable_graph_def();
  out->mutable_versions()->set_producer(kGraphProducer);
  for (const proto::NodeDef& n : graph.node()) {  // the graph's order: inputs first
    if (!kept.contains(n.name())) continue;
    TW_ASSIGN_OR_RETURN(tfproto::NodeDef node, ExportNode(n));
    if (spec.clear_devices) node.clear_device();
    // Colocation with a node left behind would not import: keep only kept nodes.
    auto colocation = node.mutable_attr()->find("_class");
    if (colocation != node.mutable_attr()->end()) {
      auto* list = colocation->second.mutable_list()->mutable_s();
      list->erase(std::remove_if(list->begin(), list->end(),
                                 [&](const std::string& loc) {
                                   return !loc.starts_with("loc:@") ||
                                          !kept.contains(loc.substr(5));
                                 }),
                  list->end());
      if (list->empty()) node.mutable_attr()->erase(colocation);
    }
    *out->add_node() = std::move(node);
  }
  if (!spec.variables.empty()) {
    std::string scope = "save";
    for (int i = 1; by_name.contains(scope + "/Const") || by_name.contains(scope + "/restore_all");
         ++i) {
      scope = absl::StrCat("save_", i);
    }
    *meta.mutable_saver_def() = SaverBuilder(scope, out).Build(spec.variables);
  }
  for (const SignatureSpec& s : spec.signatures) {
    tfproto::SignatureDef& def = (*meta.mutable_signature_def())[s.key];
    def.set_method_name(s.method_name);
    for (const auto& [list, map] : {std::pair{&s.inputs, def.mutable_inputs()},
                                    std::pair{&s.outputs, def.mutable_outputs()}}) {
      for (const TensorSpec& t : *list) {
        tfproto::TensorInfo& info = (*map)[t.key];
        info.set_name(t.name);
        info.set_dtype(static_cast<proto::DataType>(t.dtype));
        *info.mutable_tensor_shape() = ShapeOf(t.shape);
      }
    }
  }
  for (const AssetSpec& a : spec.assets) {
    tfproto::AssetFileDef* asset = meta.add_asset_file_def();
    asset->set_filename(a.filename);
    asset->mutable_tensor_info()->set_name(a.tensor);
    asset->mutable_tensor_info()->set_dtype(proto::DT_STRING);
    asset->mutable_tensor_info()->mutable_tensor_shape();
  }
  if (!spec.main_op.empty()) {
    (*meta.mutable_collection_def())["saved_model_main_op"].mutable_node_list()->add_value(
        spec.main_op);
  }
  auto* info = meta.mutable_meta_info_def();
  for (const std::string& tag : spec.tags) info->add_tags(tag);
  return meta;
}

Status WriteSavedModel(const std::string& dir,
                       const std::vector<tfproto::MetaGraphDef>& meta_graphs, bool as_text) {
  tfproto::SavedModel model;
  model.set_saved_model_schema_version(1);
  for (const auto& m : meta_graphs) *model.add_meta_graphs() = m;
  std::string bytes;
  if (as_text) {
    if (!google::protobuf::TextFormat::PrintToString(model, &bytes)) {
      return errors::Internal("cannot print the SavedModel of ", dir, " as text");
    }
  } else if (!model.SerializeToString(&bytes)) {
    return errors::Internal("cannot serialize the SavedModel of ", dir);
  }
  return checkpoint::WriteFileAtomically(dir + (as_text ? "/saved_model.pbtxt" : "/saved_model.pb"),
                                         bytes);
}

}  // namespace tw::saved_model
