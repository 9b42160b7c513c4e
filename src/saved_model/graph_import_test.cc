// ImportNode and ImportTensor over nodes as TensorFlow writes them.
#include "src/saved_model/graph_import.h"

#include <cstring>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/saved_model/graph_export.h"

namespace tw::saved_model {
namespace {

using ::testing::HasSubstr;

tfproto::NodeDef Node(const std::string& op) {
  tfproto::NodeDef n;
  n.set_name("n");
  n.set_op(op);
  return n;
}

TEST(GraphImportTest, TypedValuesRepeatTheLastAsTensorFlowReadsThem) {
  tfproto::TensorProto t;
  t.set_dtype(proto::DT_FLOAT);
  t.mutable_tensor_shape()->add_dim()->set_size(4);
  t.add_float_val(1.5f);
  t.add_float_val(2.5f);
  auto got = ImportTensor(t, "c");
  ASSERT_TRUE(got.ok()) << got.status();
  float values[4];
  ASSERT_EQ(got->tensor_content().size(), sizeof(values));
  std::memcpy(values, got->tensor_content().data(), sizeof(values));
  EXPECT_THAT(values, ::testing::ElementsAre(1.5f, 2.5f, 2.5f, 2.5f));
  t.add_float_val(3);
  t.add_float_val(4);
  t.add_float_val(5);  // five values for four elements
  EXPECT_TRUE(IsInvalidArgument(ImportTensor(t, "c").status()));
  tfproto::TensorProto bad;
  bad.set_dtype(proto::DT_INT32);
  bad.mutable_tensor_shape()->add_dim()->set_size(2);
  bad.set_tensor_content(std::string(7, '\0'));
  EXPECT_TRUE(IsInvalidArgument(ImportTensor(bad, "c").status()));
}

TEST(GraphImportTest, ResourceOpsBecomeTensorweavesAndAssignGetsItsAttributes) {
  tfproto::NodeDef assign = Node("AssignVariableOp");
  assign.add_input("v");
  assign.add_input("value");
  (*assign.mutable_attr())["dtype"].set_type(proto::DT_FLOAT);
  auto got = ImportNode(assign);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->op(), "Assign");
  EXPECT_EQ(got->attr().at("T").type(), proto::DT_FLOAT);
  EXPECT_TRUE(got->attr().at("validate_shape").b());
  tfproto::NodeDef handle = Node("VarHandleOp");
  (*handle.mutable_attr())["dtype"].set_type(proto::DT_FLOAT);
  (*handle.mutable_attr())["shape"].mutable_shape();
  (*handle.mutable_attr())["allowed_devices"].mutable_list();  // TensorFlow 2's default
  (*handle.mutable_attr())["_output_shapes"].mutable_list();   // bookkeeping: dropped
  got = ImportNode(handle);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->op(), "Variable");
  EXPECT_FALSE(got->attr().contains("allowed_devices"));
  EXPECT_FALSE(got->attr().contains("_output_shapes"));
}

TEST(GraphImportTest, WhatTensorweaveCannotHonourIsRefusedByName) {
  tfproto::NodeDef cast = Node("Cast");
  (*cast.mutable_attr())["SrcT"].set_type(proto::DT_FLOAT);
  (*cast.mutable_attr())["DstT"].set_type(proto::DT_INT32);
  (*cast.mutable_attr())["Truncate"].set_b(false);
  EXPECT_TRUE(ImportNode(cast).ok());
  (*cast.mutable_attr())["Truncate"].set_b(true);  // not TensorFlow's default
  auto refused = ImportNode(cast);
  EXPECT_TRUE(IsUnimplemented(refused.status())) << refused.status();
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("node n attribute Truncate"));
  // TensorFlow's Select takes a vector condition as a row mask; tensorweave's broadcasts,
  // as SelectV2, which is what export writes and import takes.
  EXPECT_TRUE(IsUnimplemented(ImportNode(Node("Select")).status()));
  proto::NodeDef select;
  select.set_name("s");
  select.set_op("Select");
  (*select.mutable_attr())["T"].set_type(proto::DT_FLOAT);
  auto exported = ExportNode(select);
  ASSERT_TRUE(exported.ok());
  EXPECT_EQ(exported->op(), "SelectV2");
  auto back = ImportNode(*exported);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->op(), "Select");
  refused = ImportNode(Node("Unique"));
  EXPECT_TRUE(IsUnimplemented(refused.status()));
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("TensorFlow's op Unique"));
}

}  // namespace
}  // namespace tw::saved_model
