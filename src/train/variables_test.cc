// Partitioned variables: looking rows up by TensorFlow's two partition strategies.
#include "tensorweave/train/variables.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensorweave/ops.h"
#include "tensorweave/session.h"

namespace tw::train {
namespace {

// A [7, 1] table split 3 + 2 + 2 whose part i holds the values 10*i + row.
StatusOr<PartitionedVariable> Table(const Scope& root, ModelVariables* vars) {
  int part = 0;
  return vars->AddPartitioned(
      root, "table", DT_FLOAT, {7, 1}, 3, [&part](const Scope& s, std::vector<int64_t> shape) {
        std::vector<float> values;
        for (int64_t r = 0; r < shape[0]; ++r) values.push_back(10 * part + r);
        ++part;
        return ops::Const(s, Tensor::FromVector<float>(values, TensorShape({shape[0], 1})));
      });
}

std::vector<float> LookUp(PartitionedVariable::Strategy strategy, std::vector<int64_t> ids) {
  Scope root = Scope::NewRootScope();
  ModelVariables vars;
  auto table = Table(root, &vars);
  EXPECT_TRUE(table.ok()) << table.status();
  Output rows = table->Lookup(root, Tensor::FromVector<int64_t>(ids), strategy);
  ClientSession session(root);
  EXPECT_TRUE(session.Run({}, {}, {vars.InitOp(root)}).ok());
  auto out = session.Run({}, {rows});
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  auto flat = (*out)[0].flat<float>();
  return std::vector<float>(flat.begin(), flat.end());
}

TEST(PartitionedVariableTest, DivStrategyReadsContiguousRows) {
  // Rows 0-2 in part 0, 3-4 in part 1, 5-6 in part 2.
  EXPECT_THAT(LookUp(PartitionedVariable::Strategy::kDiv, {0, 2, 3, 6, 4}),
              ::testing::ElementsAre(0, 2, 10, 21, 11));
}

TEST(PartitionedVariableTest, ModStrategyReadsRowIdOverPartsOfPartIdModParts) {
  // id 0 -> part 0 row 0; 1 -> part 1 row 0; 2 -> part 2 row 0; 3 -> part 0 row 1;
  // 4 -> part 1 row 1; 6 -> part 0 row 2.
  EXPECT_THAT(LookUp(PartitionedVariable::Strategy::kMod, {0, 1, 2, 3, 4, 6}),
              ::testing::ElementsAre(0, 10, 20, 1, 11, 2));
}

}  // namespace
}  // namespace tw::train
