#include "tensorweave/train/optimizer.h"

#include <cmath>
#include <filesystem>
#include <functional>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensorweave/ops.h"
#include "tensorweave/session.h"
#include "tensorweave/train/saver.h"

namespace tw::train {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// y = x . [2, -3] + 1 on a fixed design; the model is w (2) and b (scalar).
struct Regression {
  Scope root = Scope::NewRootScope();
  ModelVariables vars;
  ops::Variable w, b, step;
  Output loss;
  Regression() {
    step = CreateGlobalStep(root, &vars);
    w = vars.Add(root, "w", DT_FLOAT, {2, 1},
                 Tensor::FromVector<float>({0, 0}, TensorShape({2, 1})));
    b = vars.Add(root, "b", DT_FLOAT, {}, 0.0f);
    const Tensor x = Tensor::FromVector<float>({1, 0, 0, 1, 1, 1, 2, -1}, TensorShape({4, 2}));
    const Tensor y = Tensor::FromVector<float>({3, -2, 0, 8}, TensorShape({4, 1}));
    Output pred = ops::Add(root, ops::MatMul(root, x, ops::ReadVariable(root, w)),
                           ops::ReadVariable(root, b));
    loss = ops::Mean(root, ops::Square(root, ops::Sub(root, pred, y)), {0, 1});
  }
};

float Train(Regression& r, Optimizer& optimizer, int steps, ClientSession& s) {
  auto train = optimizer.Minimize(r.root, r.loss, &r.vars, r.step);
  EXPECT_TRUE(train.ok()) << train.status();
  EXPECT_TRUE(s.Run({}, {}, {r.vars.InitOp(r.root)}).ok());
  for (int i = 0; i < steps; ++i) EXPECT_TRUE(s.Run({}, {}, {*train}).ok());
  auto out = s.Run({}, {r.loss, ops::ReadVariable(r.root, r.step)});
  EXPECT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[1].scalar<int64_t>(), steps);
  return (*out)[0].scalar<float>();
}

TEST(OptimizerTest, EveryOptimizerFitsTheRegression) {
  struct Case {
    const char* name;
    std::function<std::unique_ptr<Optimizer>()> make;
    int steps;
  };
  const Case cases[] = {
      {"GradientDescent", [] { return GradientDescentOptimizer(0.1f); }, 300},
      {"Momentum", [] { return MomentumOptimizer(0.05f, 0.9f); }, 300},
      {"Nesterov", [] { return MomentumOptimizer(0.05f, 0.9f, /*use_nesterov=*/true); }, 300},
      {"Adagrad", [] { return AdagradOptimizer(0.5f); }, 500},
      {"Adam", [] { return AdamOptimizer(0.1f); }, 500},
      {"RMSProp", [] { return RMSPropOptimizer(0.01f, 0.9f, /*momentum=*/0.5f); }, 500},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Regression r;
    auto optimizer = c.make();
    ClientSession s(r.root);
    const float loss = Train(r, *optimizer, c.steps, s);
    EXPECT_LT(loss, 1e-3f);
  }
}

TEST(OptimizerTest, OneGradientDescentStepIsHandComputed) {
  Regression r;
  auto optimizer = GradientDescentOptimizer(0.1f);
  ClientSession s(r.root);
  Train(r, *optimizer, 1, s);
  // loss = mean((x.w + b - y)^2) at w = 0, b = 0: d/dw = 2/4 * x^T (-y) = [-9.5, 5] and
  // d/db = 2/4 * sum(-y) = -4.5, so one step of 0.1 gives w = [0.95, -0.5], b = 0.45.
  auto out = s.Run({}, {ops::ReadVariable(r.root, r.w), ops::ReadVariable(r.root, r.b)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NEAR((*out)[0].flat<float>()[0], 0.95f, 1e-6);
  EXPECT_NEAR((*out)[0].flat<float>()[1], -0.5f, 1e-6);
  EXPECT_NEAR((*out)[1].scalar<float>(), 0.45f, 1e-6);
}

// A learning-rate tensor replaces the constant: the same step as above with a fed rate of
// 0.1 (the optimizer's own 5.0 unused), and the rate of a double variable cast to double.
TEST(OptimizerTest, ALearningRateTensorIsUsedInsteadOfTheConstant) {
  Regression r;
  auto optimizer = GradientDescentOptimizer(5.0f);
  auto rate = ops::Placeholder(r.root.WithOpName("rate"), DT_FLOAT);
  optimizer->SetLearningRate(rate);
  auto train = optimizer->Minimize(r.root, r.loss, &r.vars, r.step);
  ASSERT_TRUE(train.ok()) << train.status();
  ClientSession s(r.root);
  ASSERT_TRUE(s.Run({}, {}, {r.vars.InitOp(r.root)}).ok());
  ASSERT_TRUE(s.Run({{rate, Tensor::Scalar(0.1f)}}, {}, {*train}).ok());
  auto out = s.Run({}, {ops::ReadVariable(r.root, r.w), ops::ReadVariable(r.root, r.b)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NEAR((*out)[0].flat<float>()[0], 0.95f, 1e-6);
  EXPECT_NEAR((*out)[1].scalar<float>(), 0.45f, 1e-6);

  Scope root = Scope::NewRootScope();
  ModelVariables vars;
  ops::Variable d = vars.Add(root, "d", DT_DOUBLE, {}, Tensor::Scalar<double>(1.0));
  auto sgd = GradientDescentOptimizer(1.0f);
  sgd->SetLearningRate(ops::Const(root, Tensor::Scalar(0.25f)));
  auto step = sgd->Minimize(root, ops::Square(root, ops::ReadVariable(root, d)), &vars);
  ASSERT_TRUE(step.ok()) << step.status();
  ClientSession session(root);
  ASSERT_TRUE(session.Run({}, {}, {vars.InitOp(root)}).ok());
  ASSERT_TRUE(session.Run({}, {}, {*step}).ok());
  auto value = session.Run({}, {ops::ReadVariable(root, d)});
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_DOUBLE_EQ((*value)[0].scalar<double>(), 0.5);  // 1 - 0.25 * 2
}

// The variable of `vars` named `name`.
ops::Variable Named(const ModelVariables& vars, const std::string& name) {
  for (const ModelVariable& v : vars.all()) {
    if (v.name == name) return v.var;
  }
  ADD_FAILURE() << "no variable " << name;
  return ops::Variable();
}

void ExpectFloats(const Tensor& t, const std::vector<double>& want, double tol = 1e-5) {
  ASSERT_EQ(t.dtype(), DT_FLOAT);
  ASSERT_EQ(t.num_elements(), static_cast<int64_t>(want.size())) << t.DebugString();
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(t.flat<float>()[i], want[i], tol) << "element " << i;
  }
}

// TensorFlow 1.x's RMSProp: the mean square starts at ones, the momentum at zeros; per step
// ms = 0.9 ms + 0.1 g^2, mom = 0.5 mom + 0.1 g / sqrt(ms + 1e-10), var -= mom.
TEST(OptimizerTest, TwoRMSPropStepsAreHandComputed) {
  Regression r;
  auto optimizer = RMSPropOptimizer(0.1f, /*decay=*/0.9f, /*momentum=*/0.5f);
  EXPECT_EQ(optimizer->name(), "RMSProp");
  ClientSession s(r.root);
  Train(r, *optimizer, 2, s);
  std::vector<std::string> names;
  for (const ModelVariable& v : r.vars.all()) names.push_back(v.name);
  EXPECT_THAT(names, ElementsAre("global_step", "w", "b", "w/RMSProp", "w/RMSProp_1", "b/RMSProp",
                                 "b/RMSProp_1"));
  // Step 1: g = [-9.5, 5] for w and -4.5 for b (see OneGradientDescentStepIsHandComputed).
  // Step 2, at the values step 1 left: g = [-7.9335357, 4.5740394] and -3.5062481.
  auto out = s.Run({}, {ops::ReadVariable(r.root, r.w), ops::ReadVariable(r.root, r.b),
                        ops::ReadVariable(r.root, Named(r.vars, "w/RMSProp")),
                        ops::ReadVariable(r.root, Named(r.vars, "w/RMSProp_1")),
                        ops::ReadVariable(r.root, Named(r.vars, "b/RMSProp")),
                        ops::ReadVariable(r.root, Named(r.vars, "b/RMSProp_1"))});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectFloats((*out)[0], {0.6556370573831507, -0.6082581501018578});
  ExpectFloats((*out)[1], {0.5730960497708077});
  ExpectFloats((*out)[2], {15.22659887757094, 5.152183676699288}, 1e-4);
  ExpectFloats((*out)[3], {-0.3540877414769177, 0.33709507783252524});
  ExpectFloats((*out)[4], {3.8618775687891818});
  ExpectFloats((*out)[5], {-0.30997864398319674});
}

// A gradient through a gather is sparse: only the gathered rows and their slots change.
TEST(OptimizerTest, RMSPropThroughAGatherUpdatesOnlyTheGatheredRows) {
  Scope root = Scope::NewRootScope();
  ModelVariables vars;
  auto table = vars.Add(root, "table", DT_FLOAT, {3, 2},
                        Tensor::FromVector<float>({1, 1, 1, 1, 1, 1}, TensorShape({3, 2})));
  Output rows = ops::ResourceGather(root, table, Tensor::FromVector<int32_t>({2, 0}));
  // d(loss)/d(rows) = [[1, 2], [3, 4]]: row 2 gets [1, 2] and row 0 [3, 4].
  Output loss = ops::Sum(
      root, ops::Mul(root, rows, Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({2, 2}))),
      {0, 1});
  auto optimizer = RMSPropOptimizer(0.1f, 0.9f, 0.5f);
  auto train = optimizer->Minimize(root, loss, &vars);
  ASSERT_TRUE(train.ok()) << train.status();
  auto graph = root.ToGraphDef();
  ASSERT_TRUE(graph.ok()) << graph.status();
  int sparse = 0, dense = 0;
  for (const auto& node : graph->node()) {
    sparse += node.op() == "SparseApplyRMSProp";
    dense += node.op() == "ApplyRMSProp";
  }
  EXPECT_EQ(sparse, 1);
  EXPECT_EQ(dense, 0);
  ClientSession s(root);
  ASSERT_TRUE(s.Run({}, {}, {vars.InitOp(root)}).ok());
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(s.Run({}, {}, {*train}).ok());
  auto out = s.Run(
      {}, {ops::ReadVariable(root, table), ops::ReadVariable(root, Named(vars, "table/RMSProp")),
           ops::ReadVariable(root, Named(vars, "table/RMSProp_1"))});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectFloats((*out)[0],
               {0.47560756688348443, 0.4166678042149812, 1, 1, 0.7500000000125, 0.57726521732957});
  ExpectFloats((*out)[1], {2.52, 3.85, 1, 1, 1, 1.57});
  ExpectFloats((*out)[2], {0.3007856353727479, 0.3303499829766081, 0, 0, 0.1499999999925,
                           0.24732317881577073});
}

// A table of ones [3, 2] read at rows {2, 0, 2}, with loss sum(rows * [[1, 2], [3, 4],
// [5, 6]]): the gradient is sparse with row 2 twice, [1, 2] and [5, 6].
struct RepeatedRows {
  Scope root = Scope::NewRootScope();
  ModelVariables vars;
  ops::Variable table;
  Output loss;
  RepeatedRows() {
    table = vars.Add(root, "table", DT_FLOAT, {3, 2},
                     Tensor::FromVector<float>({1, 1, 1, 1, 1, 1}, TensorShape({3, 2})));
    Output rows = ops::ResourceGather(root, table, Tensor::FromVector<int32_t>({2, 0, 2}));
    loss = ops::Sum(
        root,
        ops::Mul(root, rows, Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, TensorShape({3, 2}))),
        {0, 1});
  }
  // How many nodes of op `op` the graph has.
  int Count(const std::string& op) {
    auto graph = root.ToGraphDef();
    EXPECT_TRUE(graph.ok()) << graph.status();
    int n = 0;
    for (const auto& node : graph->node()) n += node.op() == op;
    return n;
  }
};

// TensorFlow sums the rows of a repeated index before a sparse update
// (_deduplicate_indexed_slices): row 2 gets one Adagrad update with g = [1, 2] + [5, 6] =
// [6, 8], so accum = 0.1 + g^2 = [36.1, 64.1] and var = 1 - 0.1 g / sqrt(accum); row 0 gets
// g = [3, 4]. Two updates in turn would leave row 2 at 0.80678 instead of 0.90014.
TEST(OptimizerTest, AdagradSumsTheRowsOfARepeatedIndex) {
  RepeatedRows r;
  auto optimizer = AdagradOptimizer(0.1f);
  auto train = optimizer->Minimize(r.root, r.loss, &r.vars);
  ASSERT_TRUE(train.ok()) << train.status();
  EXPECT_EQ(r.Count("Unique"), 1);
  EXPECT_EQ(r.Count("UnsortedSegmentSum"), 1);
  EXPECT_EQ(r.Count("SparseApplyAdagrad"), 1);
  ClientSession s(r.root);
  ASSERT_TRUE(s.Run({}, {}, {r.vars.InitOp(r.root)}).ok());
  ASSERT_TRUE(s.Run({}, {}, {*train}).ok());
  auto out = s.Run({}, {ops::ReadVariable(r.root, r.table),
                        ops::ReadVariable(r.root, Named(r.vars, "table/Adagrad"))});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectFloats((*out)[0], {0.9005509683802306, 0.9003110427441546, 1, 1, 0.9001386002052091,
                           0.9000780335663121});
  ExpectFloats((*out)[1], {9.1, 16.1, 0.1, 0.1, 36.1, 64.1}, 1e-4);
}

// RMSProp likewise: two steps with g = [6, 8] for row 2 (see TwoRMSPropStepsAreHandComputed
// for the update); row 0's values are those of RMSPropThroughAGatherUpdatesOnlyTheGatheredRows.
TEST(OptimizerTest, RMSPropSumsTheRowsOfARepeatedIndex) {
  RepeatedRows r;
  auto optimizer = RMSPropOptimizer(0.1f, 0.9f, 0.5f);
  auto train = optimizer->Minimize(r.root, r.loss, &r.vars);
  ASSERT_TRUE(train.ok()) << train.status();
  EXPECT_EQ(r.Count("Unique"), 1);
  ClientSession s(r.root);
  ASSERT_TRUE(s.Run({}, {}, {r.vars.InitOp(r.root)}).ok());
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(s.Run({}, {}, {*train}).ok());
  auto out = s.Run({}, {ops::ReadVariable(r.root, r.table),
                        ops::ReadVariable(r.root, Named(r.vars, "table/RMSProp")),
                        ops::ReadVariable(r.root, Named(r.vars, "table/RMSProp_1"))});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectFloats((*out)[0], {0.4756075668834845, 0.41666780421498123, 1, 1, 0.3588054734755472,
                           0.3337235359625089});
  ExpectFloats((*out)[1], {2.52, 3.85, 1, 1, 7.65, 12.97}, 1e-4);
  ExpectFloats((*out)[2], {0.30078563537274783, 0.33034998297660806, 0, 0, 0.3583518140529765,
                           0.370183179960477});
}

// Subtracting each piece of a repeated row is subtracting their sum, so GradientDescent
// skips the summing (as TensorFlow's does) and gets the same values.
TEST(OptimizerTest, GradientDescentAppliesRepeatedRowsWithoutSumming) {
  RepeatedRows r;
  auto optimizer = GradientDescentOptimizer(0.1f);
  auto train = optimizer->Minimize(r.root, r.loss, &r.vars);
  ASSERT_TRUE(train.ok()) << train.status();
  EXPECT_EQ(r.Count("Unique"), 0);
  ClientSession s(r.root);
  ASSERT_TRUE(s.Run({}, {}, {r.vars.InitOp(r.root)}).ok());
  ASSERT_TRUE(s.Run({}, {}, {*train}).ok());
  auto out = s.Run({}, {ops::ReadVariable(r.root, r.table)});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectFloats((*out)[0], {0.7, 0.6, 1, 1, 0.4, 0.2});
}

TEST(OptimizerTest, DeduplicateIndexedSlicesSumsRowsInOrderOfFirstOccurrence) {
  Scope root = Scope::NewRootScope();
  const IndexedSlices grad{
      ops::Const(root, Tensor::FromVector<int64_t>({4, 1, 4, 4, 0})),
      ops::Const(root,
                 Tensor::FromVector<float>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, TensorShape({5, 2}))),
      ops::Const(root, Tensor::FromVector<int64_t>({6, 2}))};
  const IndexedSlices summed = DeduplicateIndexedSlices(root, grad);
  ClientSession s(root);
  auto out = s.Run({}, {summed.indices, summed.values, summed.dense_shape});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], Tensor::FromVector<int64_t>({4, 1, 0}));
  EXPECT_EQ((*out)[1], Tensor::FromVector<float>({13, 16, 3, 4, 9, 10}, TensorShape({3, 2})));
  EXPECT_EQ((*out)[2], Tensor::FromVector<int64_t>({6, 2}));
}

TEST(OptimizerTest, SlotsAreRegisteredBesideTheirVariables) {
  Regression r;
  auto optimizer = AdamOptimizer();
  ASSERT_TRUE(optimizer->Minimize(r.root, r.loss, &r.vars, r.step).ok());
  std::vector<std::string> names;
  for (const ModelVariable& v : r.vars.all()) names.push_back(v.name);
  EXPECT_THAT(names, ElementsAre("global_step", "w", "b", "beta1_power", "beta2_power", "w/Adam",
                                 "w/Adam_1", "b/Adam", "b/Adam_1"));
  EXPECT_EQ(r.vars.trainable().size(), 2u);
}

TEST(OptimizerTest, ALossWithoutTheVariablesIsAnError) {
  Regression r;
  auto unrelated = r.vars.Add(r.root, "unrelated", DT_FLOAT, {}, 1.0f);
  auto optimizer = GradientDescentOptimizer(0.1f);
  auto train = optimizer->Minimize(r.root, r.loss, &r.vars, r.step, {unrelated});
  ASSERT_FALSE(train.ok());
  EXPECT_THAT(std::string(train.status().message()), HasSubstr("no gradient for any variable"));
}

// An embedding split over three parts: a lookup touches only some rows, the gradient stays
// sparse, and only the looked-up rows change.
TEST(OptimizerTest, PartitionedLookupTrainsOnlyTheRowsItTouches) {
  Scope root = Scope::NewRootScope();
  ModelVariables vars;
  auto step = CreateGlobalStep(root, &vars);
  auto table = vars.AddPartitioned(root, "table", DT_FLOAT, {7, 2}, 3,
                                   [](const Scope& s, std::vector<int64_t> shape) {
                                     return ops::Fill(s, Tensor::FromVector<int64_t>(shape), 1.0f);
                                   });
  ASSERT_TRUE(table.ok()) << table.status();
  ASSERT_EQ(table->parts.size(), 3u);
  // TensorFlow's names for the parts: "<name>/part_<i>", not "<name>/part_<i>_1".
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(table->parts[i].op().name(), "table/part_" + std::to_string(i));
  }
  auto graph = root.ToGraphDef();
  ASSERT_TRUE(graph.ok()) << graph.status();
  int variables = 0;
  for (const auto& node : graph->node()) {
    if (node.op() != "Variable") continue;
    ++variables;
    EXPECT_THAT(node.name(),
                ::testing::AnyOf("global_step", "table/part_0", "table/part_1", "table/part_2"));
  }
  EXPECT_EQ(variables, 4);
  EXPECT_EQ(table->parts[0].shape[0], 3);  // 7 rows: 3 + 2 + 2
  EXPECT_EQ(table->row_offsets[2], 5);
  auto ids = Tensor::FromVector<int32_t>({0, 4, 6, 4});
  Output rows = table->Lookup(root, ids);
  Output loss = ops::Sum(root, rows, {0, 1});
  auto optimizer = GradientDescentOptimizer(0.5f);
  auto train = optimizer->Minimize(root, loss, &vars, step);
  ASSERT_TRUE(train.ok()) << train.status();
  ClientSession s(root);
  ASSERT_TRUE(s.Run({}, {}, {vars.InitOp(root)}).ok());
  auto looked_up = s.Run({}, {rows});
  ASSERT_TRUE(looked_up.ok()) << looked_up.status();
  EXPECT_EQ((*looked_up)[0].shape(), TensorShape({4, 2}));
  ASSERT_TRUE(s.Run({}, {}, {*train}).ok());
  auto value = s.Run({}, {table->Value(root)});
  ASSERT_TRUE(value.ok()) << value.status();
  // d(sum)/d(row) is 1 per lookup: row 4 was looked up twice.
  EXPECT_EQ((*value)[0],
            Tensor::FromVector<float>({0.5f, 0.5f, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 0.5f, 0.5f},
                                      TensorShape({7, 2})));
  auto bad = vars.AddPartitioned(root, "too_many", DT_FLOAT, {2, 2}, 3,
                                 [](const Scope& sc, std::vector<int64_t> shape) {
                                   return ops::Fill(sc, Tensor::FromVector<int64_t>(shape), 0.0f);
                                 });
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()),
              HasSubstr("cannot split dimension 0 of size 2 into 3 parts"));
}

// An Adagrad slot of a partitioned variable is saved as a slice of one "table/Adagrad", so a
// model partitioned in two parts restores what a model in three parts saved.
TEST(OptimizerTest, SlotsOfPartitionedVariablesRestoreOntoAnotherPartitioning) {
  const std::string dir = ::testing::TempDir() + "/partitioned_slots";
  std::filesystem::remove_all(dir);
  struct Embedding {
    Scope root = Scope::NewRootScope();
    ModelVariables vars;
    StatusOr<PartitionedVariable> table = errors::Unknown("unset");
    Operation train;
    std::unique_ptr<Saver> saver;
    Embedding(int parts, const std::string& dir) {
      auto step = CreateGlobalStep(root, &vars);
      table = vars.AddPartitioned(root, "table", DT_FLOAT, {7, 2}, parts,
                                  [](const Scope& s, std::vector<int64_t> shape) {
                                    return ops::Fill(s, Tensor::FromVector<int64_t>(shape), 1.0f);
                                  });
      EXPECT_TRUE(table.ok()) << table.status();
      Output loss =
          ops::Sum(root, table->Lookup(root, Tensor::FromVector<int32_t>({0, 4, 6})), {0, 1});
      auto op = AdagradOptimizer(0.5f)->Minimize(root, loss, &vars, step);
      EXPECT_TRUE(op.ok()) << op.status();
      train = *op;
      std::vector<SaveableVariable> saveables;
      for (const ModelVariable& v : vars.all()) {
        saveables.push_back(
            {.name = v.name, .var = v.var, .full_shape = v.full_shape, .row_offset = v.row_offset});
      }
      auto made = Saver::Create(root, saveables, {.checkpoint_dir = dir});
      EXPECT_TRUE(made.ok()) << made.status();
      saver = std::move(*made);
    }
    // The whole table and its whole accumulator.
    std::vector<Tensor> Values(ClientSession& s) {
      InputList accumulators;
      for (const ModelVariable& v : vars.all()) {
        if (v.name == "table/Adagrad") accumulators.push_back(ops::ReadVariable(root, v.var));
      }
      auto out = s.Run({}, {table->Value(root), ops::Concat(root, accumulators, 0)});
      EXPECT_TRUE(out.ok()) << out.status();
      return out.ok() ? *out : std::vector<Tensor>{};
    }
  };
  Embedding three(3, dir);
  ClientSession first(three.root);
  ASSERT_TRUE(first.Run({}, {}, {three.vars.InitOp(three.root)}).ok());
  ASSERT_TRUE(first.Run({}, {}, {three.train}).ok());
  auto saved = three.saver->Save(first, 1);
  ASSERT_TRUE(saved.ok()) << saved.status();
  const std::vector<Tensor> expected = three.Values(first);

  Embedding two(2, dir);
  ClientSession second(two.root);
  ASSERT_TRUE(two.saver->Restore(second, *saved).ok());
  const std::vector<Tensor> restored = two.Values(second);
  ASSERT_EQ(restored.size(), 2u);
  EXPECT_EQ(restored[0], expected[0]);
  EXPECT_EQ(restored[1], expected[1]);
  // The looked-up rows moved and their accumulators grew; the others did not.
  EXPECT_FLOAT_EQ(restored[1].flat<float>()[0], 1.1f);
  EXPECT_FLOAT_EQ(restored[1].flat<float>()[2], 0.1f);
}

}  // namespace
}  // namespace tw::train
