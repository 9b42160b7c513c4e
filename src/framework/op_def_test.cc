#include "src/framework/op_def.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/framework/attr_value.h"

namespace tw {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(OpDefBuilderTest, ParsesArgumentsAndAttributes) {
  auto def = OpDefBuilder("Concatish")
                 .Input("values: N * T")
                 .Input("axis: int32")
                 .Input("extras: Textra")
                 .Output("out: T")
                 .Attr("N: int >= 2")
                 .Attr("T: {float, double} = float")
                 .Attr("Textra: list(type) = []")
                 .Attr("flag: bool = true")
                 .Attr("shape: shape = ?")
                 .SetIsStateful()
                 .Doc("test")
                 .Finalize();
  ASSERT_TRUE(def.ok()) << def.status();
  ASSERT_EQ(def->inputs.size(), 3u);
  EXPECT_EQ(def->inputs[0].number_attr, "N");
  EXPECT_EQ(def->inputs[0].type_attr, "T");
  EXPECT_EQ(def->inputs[1].type, DT_INT32);
  EXPECT_EQ(def->inputs[2].type_list_attr, "Textra");
  EXPECT_EQ(def->FindAttr("N")->minimum, 2);
  EXPECT_THAT(def->FindAttr("T")->allowed_types, ElementsAre(DT_FLOAT, DT_DOUBLE));
  EXPECT_EQ(def->FindAttr("flag")->default_value->b(), true);
  EXPECT_TRUE(def->FindAttr("shape")->default_value->shape().unknown_rank());
  EXPECT_TRUE(def->is_stateful);
}

TEST(OpDefBuilderTest, ReportsMalformedSpecs) {
  auto def =
      OpDefBuilder("Bad").Input("x: Q").Attr("k: widget").Attr("T: {float, nosuch}").Finalize();
  ASSERT_FALSE(def.ok());
  EXPECT_THAT(std::string(def.status().message()), HasSubstr("unknown attribute kind \"widget\""));
  EXPECT_THAT(std::string(def.status().message()), HasSubstr("unknown data type \"nosuch\""));
  EXPECT_THAT(std::string(def.status().message()),
              HasSubstr("\"Q\" is neither a data type nor a type attribute"));
}

OpDef TestOp() {
  return *OpDefBuilder("TestOp")
              .Input("values: N * T")
              .Input("more: Tlist")
              .Output("out: T")
              .Attr("N: int >= 1")
              .Attr("T: {float, int32}")
              .Attr("Tlist: list(type) = []")
              .Attr("scale: float = 1.0")
              .Finalize();
}

TEST(NodeValidationTest, FillsDefaultsAndComputesTypes) {
  OpDef def = TestOp();
  proto::NodeDef node;
  node.set_name("n");
  node.set_op("TestOp");
  (*node.mutable_attr())["N"] = MakeAttr(int64_t{3});
  (*node.mutable_attr())["T"] = MakeAttr(DT_INT32);
  (*node.mutable_attr())["Tlist"] = MakeAttr(std::vector<DataType>{DT_STRING, DT_BOOL});
  ASSERT_TRUE(AddDefaultsAndValidateAttrs(def, &node).ok());
  EXPECT_FLOAT_EQ(node.attr().at("scale").f(), 1.0f);
  std::vector<DataType> in, out;
  ASSERT_TRUE(ArgTypesForNode(def, node, false, &in).ok());
  ASSERT_TRUE(ArgTypesForNode(def, node, true, &out).ok());
  EXPECT_THAT(in, ElementsAre(DT_INT32, DT_INT32, DT_INT32, DT_STRING, DT_BOOL));
  EXPECT_THAT(out, ElementsAre(DT_INT32));
  std::map<std::string, std::pair<int, int>> ranges;
  ASSERT_TRUE(ArgRangesForNode(def, node, false, &ranges).ok());
  EXPECT_EQ(ranges["values"], std::make_pair(0, 3));
  EXPECT_EQ(ranges["more"], std::make_pair(3, 5));
}

TEST(NodeValidationTest, ErrorsNameTheNodeAndAttribute) {
  OpDef def = TestOp();
  proto::NodeDef node;
  node.set_name("adder");
  node.set_op("TestOp");
  (*node.mutable_attr())["N"] = MakeAttr(int64_t{1});
  EXPECT_THAT(std::string(AddDefaultsAndValidateAttrs(def, &node).message()),
              HasSubstr("node \"adder\" (op TestOp) is missing attribute \"T\""));
  (*node.mutable_attr())["T"] = MakeAttr(DT_DOUBLE);
  EXPECT_THAT(std::string(AddDefaultsAndValidateAttrs(def, &node).message()),
              HasSubstr("is double, not one of float, int32"));
  (*node.mutable_attr())["T"] = MakeAttr(DT_FLOAT);
  (*node.mutable_attr())["N"] = MakeAttr(int64_t{0});
  EXPECT_THAT(std::string(AddDefaultsAndValidateAttrs(def, &node).message()),
              HasSubstr("below the minimum 1"));
  (*node.mutable_attr())["N"] = MakeAttr(true);
  EXPECT_THAT(std::string(AddDefaultsAndValidateAttrs(def, &node).message()),
              HasSubstr("must be int, got bool"));
  (*node.mutable_attr())["N"] = MakeAttr(int64_t{1});
  (*node.mutable_attr())["bogus"] = MakeAttr(int64_t{1});
  EXPECT_THAT(std::string(AddDefaultsAndValidateAttrs(def, &node).message()),
              HasSubstr("has attribute \"bogus\", which op TestOp does not have"));
}

TEST(OpRegistryTest, UnknownOpIsNotFound) {
  auto op = OpRegistry::Global().LookUp("NoSuchOp");
  EXPECT_TRUE(IsNotFound(op.status()));
  EXPECT_EQ(op.status().message(), "Op type not registered 'NoSuchOp'");
}

}  // namespace
}  // namespace tw
