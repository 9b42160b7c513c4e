// ExportMetaGraph and WriteSavedModel over a small graph written node by node: what is
// kept, how ops and attributes become TensorFlow's, the saver subgraph and the refusals.
#include "src/saved_model/meta_graph_export.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/saved_model/graph_export.h"

namespace tw::saved_model {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

proto::NodeDef Node(const std::string& name, const std::string& op,
                    std::vector<std::string> inputs = {}, DataType t = DT_FLOAT) {
  proto::NodeDef n;
  n.set_name(name);
  n.set_op(op);
  for (auto& i : inputs) n.add_input(i);
  (*n.mutable_attr())["T"].set_type(static_cast<proto::DataType>(t));
  return n;
}

// x -> MatMul(x, read(w)) -> Softmax, plus w's initializer (Assign of a RandomUniform),
// which serving does not need.
proto::GraphDef Mlp() {
  proto::GraphDef g;
  proto::NodeDef x = Node("x", "Placeholder");
  (*x.mutable_attr())["dtype"].set_type(proto::DT_FLOAT);
  x.mutable_attr()->erase("T");
  *g.add_node() = x;
  proto::NodeDef w = Node("w", "Variable");
  (*w.mutable_attr())["dtype"].set_type(proto::DT_FLOAT);
  auto* shape = (*w.mutable_attr())["shape"].mutable_shape();
  shape->add_dim(4);
  shape->add_dim(3);
  *g.add_node() = w;
  *g.add_node() = Node("w/init", "RandomUniform");
  *g.add_node() = Node("w/Assign", "Assign", {"w", "w/init"});
  proto::NodeDef read = Node("w/read", "ReadVariable", {"w"});
  (*read.mutable_attr())["_class"].mutable_list()->add_s("loc:@w");
  *g.add_node() = read;
  *g.add_node() = Node("logits", "MatMul", {"x", "w/read"});
  *g.add_node() = Node("probs", "Softmax", {"logits"});
  return g;
}

MetaGraphSpec Spec() {
  MetaGraphSpec spec;
  spec.tags = {"serve"};
  spec.signatures.push_back(
      {.key = "serving_default",
       .method_name = "tensorflow/serving/predict",
       .inputs = {{"x", "x:0", DT_FLOAT, PartialShape::Of({-1, 4})}},
       .outputs = {{"probs", "probs:0", DT_FLOAT, PartialShape::Of({-1, 3})}}});
  spec.variables.push_back(
      {.checkpoint_name = "w", .node = "w", .dtype = DT_FLOAT, .shape = {4, 3}});
  return spec;
}

std::vector<std::string> Ops(const tfproto::GraphDef& g, const std::string& prefix = "") {
  std::vector<std::string> ops;
  for (const auto& n : g.node()) {
    if (n.name().starts_with(prefix)) ops.push_back(n.name() + "=" + n.op());
  }
  return ops;
}

TEST(MetaGraphExportTest, KeepsWhatServingNeedsInTensorFlowsOps) {
  auto meta = ExportMetaGraph(Mlp(), Spec());
  ASSERT_TRUE(meta.ok()) << meta.status();
  const tfproto::GraphDef& g = meta->graph_def();
  std::vector<std::string> model;
  for (const auto& n : g.node()) {
    if (!n.name().starts_with("save/")) model.push_back(n.name() + "=" + n.op());
  }
  EXPECT_THAT(model, ElementsAre("x=Placeholder", "w=VarHandleOp", "w/read=ReadVariableOp",
                                 "logits=MatMul", "probs=Softmax"));
  EXPECT_EQ(g.node(1).attr().at("shape").shape().dim(1).size(), 3);
  EXPECT_EQ(g.node(2).attr().at("_class").list().s(0), "loc:@w");
  const auto& sig = meta->signature_def().at("serving_default");
  EXPECT_EQ(sig.method_name(), "tensorflow/serving/predict");
  EXPECT_EQ(sig.inputs().at("x").name(), "x:0");
  EXPECT_EQ(sig.inputs().at("x").tensor_shape().dim(0).size(), -1);
  EXPECT_THAT(meta->meta_info_def().tags(), ElementsAre("serve"));
}

TEST(MetaGraphExportTest, BuildsTensorFlowsSaverForTheVariables) {
  auto meta = ExportMetaGraph(Mlp(), Spec());
  ASSERT_TRUE(meta.ok()) << meta.status();
  EXPECT_EQ(meta->saver_def().filename_tensor_name(), "save/Const:0");
  EXPECT_EQ(meta->saver_def().save_tensor_name(), "save/control_dependency:0");
  EXPECT_EQ(meta->saver_def().restore_op_name(), "save/restore_all");
  EXPECT_EQ(meta->saver_def().version(), 2);
  EXPECT_THAT(
      Ops(meta->graph_def(), "save/"),
      ElementsAre("save/filename/input=Const", "save/filename=PlaceholderWithDefault",
                  "save/Const=PlaceholderWithDefault", "save/SaveV2/tensor_names=Const",
                  "save/SaveV2/shape_and_slices=Const", "save/Read_0/ReadVariableOp=ReadVariableOp",
                  "save/SaveV2=SaveV2", "save/control_dependency=Identity",
                  "save/RestoreV2/tensor_names=Const", "save/RestoreV2/shape_and_slices=Const",
                  "save/RestoreV2=RestoreV2", "save/Identity=Identity",
                  "save/AssignVariableOp=AssignVariableOp", "save/restore_all=NoOp"));
}

TEST(MetaGraphExportTest, PartsOfAPartitionedVariableRestoreTheirSlices) {
  MetaGraphSpec spec = Spec();
  spec.variables = {{.checkpoint_name = "w",
                     .node = "w",
                     .dtype = DT_FLOAT,
                     .shape = {4, 3},
                     .full_shape = {10, 3},
                     .row_offset = 6}};
  auto meta = ExportMetaGraph(Mlp(), spec);
  ASSERT_TRUE(meta.ok()) << meta.status();
  for (const auto& n : meta->graph_def().node()) {
    if (n.name() == "save/RestoreV2/shape_and_slices") {
      EXPECT_EQ(n.attr().at("value").tensor().string_val(0), "10 3 6,4:0,3");
    }
  }
}

TEST(MetaGraphExportTest, AnOpTensorFlowLacksIsRefusedByName) {
  proto::GraphDef g = Mlp();
  *g.add_node() = Node("odd", "SaveVariables", {"probs"});
  MetaGraphSpec spec = Spec();
  spec.signatures[0].outputs.push_back({"odd", "odd:0", DT_FLOAT, PartialShape::Unknown()});
  auto meta = ExportMetaGraph(g, spec);
  EXPECT_TRUE(IsUnimplemented(meta.status())) << meta.status();
  EXPECT_THAT(std::string(meta.status().message()), HasSubstr("node odd: op SaveVariables"));
  spec = Spec();
  spec.signatures[0].outputs[0].name = "nowhere:0";
  EXPECT_TRUE(IsInvalidArgument(ExportMetaGraph(Mlp(), spec).status()));
}

TEST(MetaGraphExportTest, WritesTheSavedModelFile) {
  const std::string dir = ::testing::TempDir() + "/saved_model_" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  auto meta = ExportMetaGraph(Mlp(), Spec());
  ASSERT_TRUE(meta.ok());
  ASSERT_TRUE(WriteSavedModel(dir, {*meta}, /*as_text=*/false).ok());
  std::ifstream in(dir + "/saved_model.pb", std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  tfproto::SavedModel model;
  ASSERT_TRUE(model.ParseFromString(bytes.str()));
  EXPECT_EQ(model.saved_model_schema_version(), 1);
  ASSERT_EQ(model.meta_graphs_size(), 1);
  EXPECT_EQ(model.meta_graphs(0).graph_def().versions().producer(), 27);
}

}  // namespace
}  // namespace tw::saved_model
