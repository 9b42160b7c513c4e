// Optimizer update ops: hand-computed values over several steps, Nesterov variants, sparse
// updates with repeated indices, every error path, and concurrent updates.
#include "tensorweave/ops/training_ops.h"

#include <atomic>
#include <cmath>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensorweave/ops.h"
#include "tensorweave/session.h"

namespace tw {
namespace {

using ::testing::HasSubstr;

constexpr double kTol = 1e-12;

Tensor Doubles(std::vector<double> v, TensorShape shape) {
  return Tensor::FromVector<double>(std::move(v), shape);
}
Tensor Doubles(std::vector<double> v) { return Tensor::FromVector<double>(std::move(v)); }

void ExpectNear(const Tensor& actual, const Tensor& expected, double tol = kTol) {
  ASSERT_EQ(actual.dtype(), expected.dtype());
  ASSERT_EQ(actual.shape(), expected.shape()) << actual.DebugString();
  auto a = actual.flat<double>();
  auto e = expected.flat<double>();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], e[i], tol) << "element " << i;
}

std::string Message(const Status& s) { return std::string(s.message()); }

// A graph with variables initialized to given values, and a session running it.
class TrainingTest : public ::testing::Test {
 protected:
  ops::Variable Var(const std::string& name, const Tensor& init) {
    std::vector<int64_t> dims = init.shape().dims();
    auto v = ops::MakeVariable(root_, name, init.dtype(), dims);
    inits_.push_back(ops::Assign(root_, v, init).op());
    return v;
  }
  // A variable that is never assigned.
  ops::Variable Uninitialized(const std::string& name, DataType dtype, std::vector<int64_t> dims) {
    return ops::MakeVariable(root_, name, dtype, std::move(dims));
  }
  void Init() { ASSERT_TRUE(session_.Run({}, {}, inits_).ok()); }
  Status Step(const Operation& op, const ClientSession::FeedList& feeds = {}) {
    return session_.Run(feeds, {}, {op}).status();
  }
  Tensor Read(const ops::Variable& v) {
    auto out = session_.Run({}, {ops::ReadVariable(root_, v)});
    if (!out.ok()) {
      ADD_FAILURE() << out.status();
      return Tensor();
    }
    return (*out)[0];
  }

  Scope root_ = Scope::NewRootScope();
  std::vector<Operation> inits_;
  ClientSession session_{root_};
};

TEST_F(TrainingTest, GradientDescentTwoSteps) {
  auto w = Var("w", Doubles({1, 2}));
  auto step = ops::ApplyGradientDescent(root_, w, 0.5, Doubles({0.2, -0.4}));
  Init();
  ASSERT_TRUE(Step(step).ok());
  ExpectNear(Read(w), Doubles({0.9, 2.2}));
  ASSERT_TRUE(Step(step).ok());
  ExpectNear(Read(w), Doubles({0.8, 2.4}));
}

TEST_F(TrainingTest, GradientDescentFloat) {
  auto w = Var("w", Tensor::FromVector<float>({1, 2}));
  auto step = ops::ApplyGradientDescent(root_, w, 0.5f, Tensor::FromVector<float>({0.5f, -1}));
  Init();
  ASSERT_TRUE(Step(step).ok());
  EXPECT_EQ(Read(w), Tensor::FromVector<float>({0.75f, 2.5f}));
}

TEST_F(TrainingTest, MomentumTwoSteps) {
  auto w = Var("w", Doubles({1, 2}));
  auto accum = Var("accum", Doubles({0, 0}));
  auto step = ops::ApplyMomentum(root_, w, accum, 0.1, Doubles({1, -2}), 0.9);
  Init();
  ASSERT_TRUE(Step(step).ok());
  ExpectNear(Read(accum), Doubles({1, -2}));
  ExpectNear(Read(w), Doubles({0.9, 2.2}));
  ASSERT_TRUE(Step(step).ok());
  ExpectNear(Read(accum), Doubles({1.9, -3.8}));
  ExpectNear(Read(w), Doubles({0.71, 2.58}));
}

TEST_F(TrainingTest, NesterovMomentumTwoSteps) {
  auto w = Var("w", Doubles({1, 2}));
  auto accum = Var("accum", Doubles({0, 0}));
  auto step =
      ops::ApplyMomentum(root_, w, accum, 0.1, Doubles({1, -2}), 0.9, {.use_nesterov = true});
  Init();
  ASSERT_TRUE(Step(step).ok());
  // var -= lr * grad + lr * momentum * accum
  ExpectNear(Read(w), Doubles({0.81, 2.38}));
  ASSERT_TRUE(Step(step).ok());
  ExpectNear(Read(accum), Doubles({1.9, -3.8}));
  ExpectNear(Read(w), Doubles({0.539, 2.922}));
}

TEST_F(TrainingTest, AdagradTwoSteps) {
  auto w = Var("w", Doubles({1, 2}));
  auto accum = Var("accum", Doubles({0.1, 0.1}));
  auto step = ops::ApplyAdagrad(root_, w, accum, 0.1, Doubles({0.3, -0.5}));
  Init();
  ASSERT_TRUE(Step(step).ok());
  ExpectNear(Read(accum), Doubles({0.19, 0.35}));
  ExpectNear(Read(w), Doubles({0.9311752798388315, 2.0845154254728517}));
  ASSERT_TRUE(Step(step).ok());
  ExpectNear(Read(accum), Doubles({0.28, 0.6}));
  ExpectNear(Read(w), Doubles({0.8744806088874475, 2.149065147909642}));
}

// The hot case: a 784x256 float variable, checked against a double-precision reference.
// Large enough to be updated block by block, with a last block shorter than the others.
TEST_F(TrainingTest, AdagradLargeFloatMatchesReference) {
  constexpr int64_t kRows = 785, kCols = 256, kN = kRows * kCols;
  std::vector<float> w0(kN), g(kN);
  for (int64_t i = 0; i < kN; ++i) {
    w0[i] = static_cast<float>((i % 97) - 48) / 50.0f;
    g[i] = static_cast<float>((i % 31) - 15) / 20.0f;
  }
  auto w = Var("w", Tensor::FromVector<float>(w0, TensorShape({kRows, kCols})));
  auto accum = Var("accum", Tensor::FromVector<float>(std::vector<float>(kN, 0.1f),
                                                      TensorShape({kRows, kCols})));
  auto step = ops::ApplyAdagrad(root_, w, accum, 0.01f,
                                Tensor::FromVector<float>(g, TensorShape({kRows, kCols})));
  Init();
  std::vector<double> ref_w(w0.begin(), w0.end()), ref_a(kN, 0.1f);
  for (int s = 0; s < 3; ++s) {
    ASSERT_TRUE(Step(step).ok());
    for (int64_t i = 0; i < kN; ++i) {
      ref_a[i] += double{g[i]} * g[i];
      ref_w[i] -= 0.01 * g[i] / std::sqrt(ref_a[i]);
    }
  }
  Tensor got = Read(w), got_accum = Read(accum);
  auto v = got.flat<float>();
  auto a = got_accum.flat<float>();
  int bad = 0, bad_accum = 0;
  for (int64_t i = 0; i < kN; ++i) {
    bad += std::abs(v[i] - ref_w[i]) > 1e-5;
    bad_accum += std::abs(a[i] - ref_a[i]) > 1e-4;
  }
  EXPECT_EQ(bad, 0);
  EXPECT_EQ(bad_accum, 0);
}

TEST_F(TrainingTest, AdamThreeSteps) {
  for (bool nesterov : {false, true}) {
    SCOPED_TRACE(nesterov ? "nesterov" : "plain");
    Scope s = root_.NewSubScope(nesterov ? "nesterov" : "plain");
    auto w = Var(nesterov ? "wn" : "w", Doubles({1, 2}));
    auto m = Var(nesterov ? "mn" : "m", Doubles({0, 0}));
    auto v = Var(nesterov ? "vn" : "v", Doubles({0, 0}));
    auto b1p = ops::Placeholder(s, DT_DOUBLE);
    auto b2p = ops::Placeholder(s, DT_DOUBLE);
    auto grad = ops::Placeholder(s, DT_DOUBLE);
    auto step = ops::ApplyAdam(s, w, m, v, b1p, b2p, 0.01, 0.9, 0.999, 1e-8, grad,
                               {.use_nesterov = nesterov});
    Init();
    const std::vector<std::vector<double>> grads{{0.1, -0.2}, {0.3, 0.4}, {-0.5, 0.1}};
    const std::vector<std::vector<double>> want_plain{{0.9900000316226766, 2.009999984188637},
                                                      {0.9808222296111345, 2.0063389515072783},
                                                      {0.9824313717869907, 2.00218244237829}};
    const std::vector<std::vector<double>> want_nesterov{{0.9810000600830856, 2.0189999699584096},
                                                         {0.9656801905715116, 2.0090486174881717},
                                                         {0.9725282244890312, 2.003912957550945}};
    for (int t = 1; t <= 3; ++t) {
      ASSERT_TRUE(Step(step, {{b1p, Tensor::Scalar(std::pow(0.9, t))},
                              {b2p, Tensor::Scalar(std::pow(0.999, t))},
                              {grad, Doubles(grads[t - 1])}})
                      .ok());
      ExpectNear(Read(w), Doubles((nesterov ? want_nesterov : want_plain)[t - 1]));
    }
    ExpectNear(Read(m), Doubles({-0.0149, 0.0298}));
    ExpectNear(Read(v), Doubles({0.00034989001, 0.00020976004}));
  }
}

// ms = rho ms + (1 - rho) grad^2; mom = momentum mom + lr grad / sqrt(ms + epsilon);
// var -= mom. An epsilon of 0.01 so that it shows in the values.
TEST_F(TrainingTest, RMSPropTwoSteps) {
  auto w = Var("w", Doubles({1, 2}));
  auto ms = Var("ms", Doubles({1, 1}));
  auto mom = Var("mom", Doubles({0, 0}));
  auto step = ops::ApplyRMSProp(root_, w, ms, mom, 0.1, 0.9, 0.5, 0.01, Doubles({0.3, -0.5}));
  Init();
  ASSERT_TRUE(Step(step).ok());
  // ms = 0.9 + 0.1 * [0.09, 0.25]; mom = 0.1 * grad / sqrt(ms + 0.01)
  ExpectNear(Read(ms), Doubles({0.909, 0.925}));
  ExpectNear(Read(mom), Doubles({0.031294174436231205, -0.05170876899950192}));
  ExpectNear(Read(w), Doubles({0.9687058255637688, 2.051708768999502}));
  ASSERT_TRUE(Step(step).ok());
  ExpectNear(Read(ms), Doubles({0.8271, 0.8575}));
  ExpectNear(Read(mom), Doubles({0.04843642032429091, -0.07953719720925286}));
  ExpectNear(Read(w), Doubles({0.920269405239478, 2.1312459662087546}));
}

TEST_F(TrainingTest, RMSPropFloat) {
  auto w = Var("w", Tensor::FromVector<float>({1, 2}));
  auto ms = Var("ms", Tensor::FromVector<float>({1, 1}));
  auto mom = Var("mom", Tensor::FromVector<float>({0, 0}));
  // ms = 0.5 + 0.5 * [1, 4] = [1, 2.5]; mom = 0.5 * grad / sqrt(ms); var -= mom
  auto step = ops::ApplyRMSProp(root_, w, ms, mom, 0.5f, 0.5f, 0.0f, 0.0f,
                                Tensor::FromVector<float>({1, -2}));
  Init();
  ASSERT_TRUE(Step(step).ok());
  Tensor got = Read(w);
  EXPECT_FLOAT_EQ(got.flat<float>()[0], 0.5f);
  EXPECT_FLOAT_EQ(got.flat<float>()[1], 2 + 1 / std::sqrt(2.5f));
  EXPECT_EQ(Read(ms), Tensor::FromVector<float>({1, 2.5f}));
}

TEST_F(TrainingTest, SparseGradientDescentRepeatedIndicesApplyEachTime) {
  auto w = Var("w", Doubles({1, 1, 2, 2, 3, 3}, TensorShape({3, 2})));
  auto g = Doubles({1, 2, 3, 4, 5, 6}, TensorShape({3, 2}));
  auto step32 =
      ops::SparseApplyGradientDescent(root_, w, 0.5, g, Tensor::FromVector<int32_t>({2, 0, 2}));
  auto step64 =
      ops::SparseApplyGradientDescent(root_, w, 0.5, g, Tensor::FromVector<int64_t>({2, 0, 2}));
  Init();
  ASSERT_TRUE(Step(step32).ok());
  ExpectNear(Read(w), Doubles({-0.5, -1, 2, 2, 0, -1}, TensorShape({3, 2})));
  ASSERT_TRUE(Step(step64).ok());
  ExpectNear(Read(w), Doubles({-2, -3, 2, 2, -3, -5}, TensorShape({3, 2})));
}

TEST_F(TrainingTest, SparseAdagradRepeatedIndicesAreSequential) {
  auto w = Var("w", Doubles({1, 1, 2, 2, 3, 3}, TensorShape({3, 2})));
  auto accum = Var("accum", Doubles(std::vector<double>(6, 0.5), TensorShape({3, 2})));
  auto step = ops::SparseApplyAdagrad(root_, w, accum, 0.1,
                                      Doubles({1, 2, 3, 4, 5, 6}, TensorShape({3, 2})),
                                      Tensor::FromVector<int64_t>({2, 0, 2}));
  Init();
  ASSERT_TRUE(Step(step).ok());
  ExpectNear(Read(accum), Doubles({9.5, 16.5, 0.5, 0.5, 26.5, 40.5}, TensorShape({3, 2})));
  ExpectNear(Read(w), Doubles({0.9026671473215424, 0.9015268072165338, 2, 2, 2.821221755671501,
                               2.811438191683587},
                              TensorShape({3, 2})));
}

TEST_F(TrainingTest, SparseNesterovMomentum) {
  auto w = Var("w", Doubles({1, 1, 2, 2, 3, 3}, TensorShape({3, 2})));
  auto accum = Var("accum", Doubles(std::vector<double>(6, 0), TensorShape({3, 2})));
  auto step = ops::SparseApplyMomentum(
      root_, w, accum, 0.1, Doubles({1, 2, 3, 4, 5, 6}, TensorShape({3, 2})),
      Tensor::FromVector<int32_t>({2, 0, 2}), 0.9, {.use_nesterov = true});
  auto plain = ops::SparseApplyMomentum(root_, w, accum, 0.1, Doubles({1, 1}, TensorShape({1, 2})),
                                        Tensor::FromVector<int32_t>({1}), 0.9);
  Init();
  ASSERT_TRUE(Step(step).ok());
  ExpectNear(Read(accum), Doubles({3, 4, 0, 0, 5.9, 7.8}, TensorShape({3, 2})));
  ExpectNear(Read(w), Doubles({0.43, 0.24, 2, 2, 1.779, 1.318}, TensorShape({3, 2})));
  ASSERT_TRUE(Step(plain).ok());  // row 1: accum = 1, var -= 0.1 * accum
  ExpectNear(Read(w), Doubles({0.43, 0.24, 1.9, 1.9, 1.779, 1.318}, TensorShape({3, 2})));
}

TEST_F(TrainingTest, SparseAdamIsLazy) {
  auto w = Var("w", Doubles({1, 1, 2, 2, 3, 3}, TensorShape({3, 2})));
  auto m = Var("m", Doubles(std::vector<double>(6, 0), TensorShape({3, 2})));
  auto v = Var("v", Doubles(std::vector<double>(6, 0), TensorShape({3, 2})));
  auto step = ops::SparseApplyAdam(root_, w, m, v, 0.9, 0.999, 0.1, 0.9, 0.999, 1e-8,
                                   Doubles({1, 2, 3, 4, 5, 6}, TensorShape({3, 2})),
                                   Tensor::FromVector<int64_t>({2, 0, 2}));
  Init();
  ASSERT_TRUE(Step(step).ok());
  // Row 1 is not in indices: its value and moments are untouched.
  ExpectNear(Read(w), Doubles({0.9000000105409244, 0.9000000079056936, 2, 2, 2.784289293839421,
                               2.776665026327918},
                              TensorShape({3, 2})));
  ExpectNear(Read(m), Doubles({0.3, 0.4, 0, 0, 0.59, 0.78}, TensorShape({3, 2})));
  ExpectNear(Read(v), Doubles({0.009, 0.016, 0, 0, 0.025999, 0.039996}, TensorShape({3, 2})));
}

// Row 2 is updated twice, the second time from the ms and mom the first left; row 1 is not
// in indices and keeps its value and slots.
TEST_F(TrainingTest, SparseRMSPropRepeatedIndicesAreSequential) {
  for (DataType index_type : {DT_INT32, DT_INT64}) {
    SCOPED_TRACE(DataTypeName(index_type));
    Scope s = root_.NewSubScope(std::string(DataTypeName(index_type)));
    const std::string suffix = index_type == DT_INT32 ? "32" : "64";
    auto w = Var("w" + suffix, Doubles({1, 1, 2, 2, 3, 3}, TensorShape({3, 2})));
    auto ms = Var("ms" + suffix, Doubles(std::vector<double>(6, 1), TensorShape({3, 2})));
    auto mom = Var("mom" + suffix, Doubles(std::vector<double>(6, 0), TensorShape({3, 2})));
    Tensor indices = index_type == DT_INT32 ? Tensor::FromVector<int32_t>({2, 0, 2})
                                            : Tensor::FromVector<int64_t>({2, 0, 2});
    auto step = ops::SparseApplyRMSProp(s, w, ms, mom, 0.1, 0.9, 0.5, 0.01,
                                        Doubles({1, 2, 3, 4, 5, 6}, TensorShape({3, 2})), indices);
    Init();
    ASSERT_TRUE(Step(step).ok());
    ExpectNear(Read(ms), Doubles({1.8, 2.5, 1, 1, 3.4, 4.77}, TensorShape({3, 2})));
    ExpectNear(Read(mom), Doubles({0.22298824387414995, 0.2524777612391213, 0, 0,
                                   0.3205170400474407, 0.3618040179139128},
                                  TensorShape({3, 2})));
    ExpectNear(Read(w), Doubles({0.77701175612585, 0.7475222387608786, 2, 2, 2.5799792409315603,
                                 2.4634551707538797},
                                TensorShape({3, 2})));
  }
}

// TensorFlow's ftrl_test (testFtrlWithL1_L2): lr 3, accumulators 0.1, l1 0.001, l2 2,
// ten steps of a constant gradient; the values TF's test expects.
TEST_F(TrainingTest, FtrlWithL1AndL2MatchesTensorFlow) {
  auto w = Var("w", Doubles({1, 2}));
  auto accum = Var("accum", Doubles({0.1, 0.1}));
  auto linear = Var("linear", Doubles({0, 0}));
  auto step = ops::ApplyFtrl(root_, w, accum, linear, Doubles({0.1, 0.2}), 3.0, 0.001, 2.0, -0.5);
  Init();
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(Step(step).ok());
  ExpectNear(Read(w), Doubles({-0.24059935, -0.46829352}), 1e-7);
  ExpectNear(Read(accum), Doubles({0.2, 0.5}));
}

// Sparse rows once per index; V2's shrinkage enters the linear term only.
TEST_F(TrainingTest, SparseFtrlV2UpdatesOnlyItsRows) {
  auto w = Var("w", Doubles({1, 2, 3, 4}, TensorShape({2, 2})));
  auto accum = Var("accum", Doubles({0.1, 0.1, 0.1, 0.1}, TensorShape({2, 2})));
  auto linear = Var("linear", Doubles({0, 0, 0, 0}, TensorShape({2, 2})));
  auto step = ops::SparseApplyFtrlV2(root_, w, accum, linear, Doubles({0.5, -0.5}, {1, 2}),
                                     Tensor::FromVector<int64_t>({1}), 1.0, 0.0, 0.0, 0.25, -0.5);
  Init();
  ASSERT_TRUE(Step(step).ok());
  // Row 1: linear = g + 2 * 0.25 * w - (sqrt(0.35) - sqrt(0.1)) * w, var = -linear / sqrt(0.35).
  const double sigma = std::sqrt(0.35) - std::sqrt(0.1);
  const double l3 = 0.5 + 0.5 * 3 - sigma * 3, l4 = -0.5 + 0.5 * 4 - sigma * 4;
  ExpectNear(Read(w),
             Doubles({1, 2, -l3 / std::sqrt(0.35), -l4 / std::sqrt(0.35)}, TensorShape({2, 2})));
  ExpectNear(Read(accum), Doubles({0.1, 0.1, 0.35, 0.35}, TensorShape({2, 2})));
}

TEST_F(TrainingTest, FtrlChecksItsScalarsBeforeChangingAnything) {
  auto w = Var("w", Doubles({1, 2}));
  auto accum = Var("accum", Doubles({0.1, 0.1}));
  auto linear = Var("linear", Doubles({0, 0}));
  auto bad_lr = ops::ApplyFtrl(root_, w, accum, linear, Doubles({1, 1}), 0.0, 0.0, 0.0, -0.5);
  auto bad_power = ops::ApplyFtrl(root_, w, accum, linear, Doubles({1, 1}), 1.0, 0.0, 0.0, 0.5);
  auto bad_l1 = ops::ApplyFtrl(root_, w, accum, linear, Doubles({1, 1}), 1.0, -1.0, 0.0, -0.5);
  Init();
  Status s = Step(bad_lr);
  EXPECT_TRUE(IsInvalidArgument(s)) << s;
  EXPECT_THAT(Message(s), HasSubstr("lr is not a positive scalar"));
  EXPECT_THAT(Message(Step(bad_power)), HasSubstr("lr_power is not a non-positive scalar"));
  EXPECT_THAT(Message(Step(bad_l1)), HasSubstr("l1 regularization strength"));
  ExpectNear(Read(w), Doubles({1, 2}));
  ExpectNear(Read(accum), Doubles({0.1, 0.1}));
}

TEST_F(TrainingTest, UninitializedVariableOrSlotIsFailedPrecondition) {
  auto w = Var("w", Doubles({1, 2}));
  auto cold = Uninitialized("cold", DT_DOUBLE, {2});
  auto accum = Uninitialized("accum", DT_DOUBLE, {2});
  auto on_cold = ops::ApplyGradientDescent(root_, cold, 0.5, Doubles({1, 1}));
  auto on_slot = ops::ApplyAdagrad(root_, w, accum, 0.1, Doubles({1, 1}));
  Init();
  Status s = Step(on_cold);
  EXPECT_TRUE(IsFailedPrecondition(s)) << s;
  EXPECT_THAT(Message(s), HasSubstr("Attempting to use uninitialized value cold"));
  s = Step(on_slot);
  EXPECT_TRUE(IsFailedPrecondition(s)) << s;
  EXPECT_THAT(Message(s), HasSubstr("Attempting to use uninitialized value accum (accum of "
                                    "ApplyAdagrad node"));
  ExpectNear(Read(w), Doubles({1, 2}));
}

TEST_F(TrainingTest, ShapeMismatchesNameTheVariableAndBothShapes) {
  auto w = Var("w", Doubles({1, 2}));
  auto accum = Var("accum3", Doubles({1, 1, 1}));
  auto m = Var("m", Doubles({0, 0}));
  auto v = Var("v", Doubles({0, 0, 0}));
  auto bad_grad = ops::ApplyGradientDescent(root_, w, 0.5, Doubles({1, 2, 3}));
  auto bad_slot = ops::ApplyMomentum(root_, w, accum, 0.1, Doubles({1, 1}), 0.9);
  auto bad_v = ops::ApplyAdam(root_, w, m, v, 0.9, 0.999, 0.1, 0.9, 0.999, 1e-8, Doubles({1, 1}));
  Init();
  Status s = Step(bad_grad);
  EXPECT_TRUE(IsInvalidArgument(s)) << s;
  EXPECT_THAT(Message(s), HasSubstr("grad has shape [3], but variable w has shape [2]"));
  s = Step(bad_slot);
  EXPECT_TRUE(IsInvalidArgument(s)) << s;
  EXPECT_THAT(Message(s), HasSubstr("accum accum3 has shape [3], but variable w has shape [2]"));
  s = Step(bad_v);
  EXPECT_THAT(Message(s), HasSubstr("v v has shape [3], but variable w has shape [2]"));
  // Nothing changed, not even the slots checked before the bad one.
  ExpectNear(Read(w), Doubles({1, 2}));
  ExpectNear(Read(m), Doubles({0, 0}));
}

TEST_F(TrainingTest, RMSPropErrorsChangeNothing) {
  auto w = Var("w", Doubles({1, 1, 2, 2}, TensorShape({2, 2})));
  auto ms = Var("ms", Doubles({1, 1, 1, 1}, TensorShape({2, 2})));
  auto mom = Var("mom", Doubles({0, 0, 0, 0}, TensorShape({2, 2})));
  auto mom3 = Var("mom3", Doubles({0, 0, 0}));
  auto bad_grad = ops::ApplyRMSProp(root_, w, ms, mom, 0.1, 0.9, 0.0, 1e-10, Doubles({1, 1}));
  auto bad_mom = ops::ApplyRMSProp(root_, w, ms, mom3, 0.1, 0.9, 0.0, 1e-10,
                                   Doubles({1, 1, 1, 1}, TensorShape({2, 2})));
  auto bad_rho = ops::ApplyRMSProp(root_, w, ms, mom, 0.1, Doubles({0.9, 0.9}), 0.0, 1e-10,
                                   Doubles({1, 1, 1, 1}, TensorShape({2, 2})));
  auto bad_sparse_grad =
      ops::SparseApplyRMSProp(root_, w, ms, mom, 0.1, 0.9, 0.0, 1e-10, Doubles({1, 1, 1}),
                              Tensor::FromVector<int32_t>({1}));
  auto out_of_range = ops::SparseApplyRMSProp(root_, w, ms, mom, 0.1, 0.9, 0.0, 1e-10,
                                              Doubles({1, 1, 1, 1}, TensorShape({2, 2})),
                                              Tensor::FromVector<int64_t>({0, 2}));
  Init();
  Status s = Step(bad_grad);
  EXPECT_TRUE(IsInvalidArgument(s)) << s;
  EXPECT_THAT(Message(s), HasSubstr("ApplyRMSProp node"));
  EXPECT_THAT(Message(s), HasSubstr("grad has shape [2], but variable w has shape [2,2]"));
  s = Step(bad_mom);
  EXPECT_TRUE(IsInvalidArgument(s)) << s;
  EXPECT_THAT(Message(s), HasSubstr("mom mom3 has shape [3], but variable w has shape [2,2]"));
  s = Step(bad_rho);
  EXPECT_TRUE(IsInvalidArgument(s)) << s;
  EXPECT_THAT(Message(s), HasSubstr("rho must be a scalar, got shape [2]"));
  s = Step(bad_sparse_grad);
  EXPECT_TRUE(IsInvalidArgument(s)) << s;
  EXPECT_THAT(Message(s), HasSubstr("SparseApplyRMSProp node"));
  EXPECT_THAT(Message(s), HasSubstr("grad has shape [3], but indices [1] into variable w of "
                                    "shape [2,2] need grad of shape [1,2]"));
  s = Step(out_of_range);
  EXPECT_TRUE(IsInvalidArgument(s)) << s;
  EXPECT_THAT(Message(s), HasSubstr("indices[1] = 2 is not in [0, 2) for variable w"));
  ExpectNear(Read(w), Doubles({1, 1, 2, 2}, TensorShape({2, 2})));
  ExpectNear(Read(ms), Doubles({1, 1, 1, 1}, TensorShape({2, 2})));
  ExpectNear(Read(mom), Doubles({0, 0, 0, 0}, TensorShape({2, 2})));
}

TEST_F(TrainingTest, NonScalarHyperparametersAreInvalidArgument) {
  auto w = Var("w", Doubles({1, 2}));
  auto accum = Var("accum", Doubles({1, 1}));
  auto bad_lr = ops::ApplyAdagrad(root_, w, accum, Doubles({0.1, 0.1}), Doubles({1, 1}));
  auto bad_momentum = ops::ApplyMomentum(root_, w, accum, 0.1, Doubles({1, 1}), Doubles({0.9}));
  Init();
  Status s = Step(bad_lr);
  EXPECT_TRUE(IsInvalidArgument(s)) << s;
  EXPECT_THAT(Message(s), HasSubstr("lr must be a scalar, got shape [2]"));
  EXPECT_THAT(Message(s), HasSubstr("ApplyAdagrad node"));
  s = Step(bad_momentum);
  EXPECT_THAT(Message(s), HasSubstr("momentum must be a scalar, got shape [1]"));
  ExpectNear(Read(w), Doubles({1, 2}));
}

TEST_F(TrainingTest, DtypeMismatchAndAliasedSlotsAreInvalidArgument) {
  auto w = Var("w", Tensor::FromVector<float>({1, 2}));
  auto d = Var("d", Doubles({1, 2}));
  auto wrong_type = ops::ApplyGradientDescent(root_, w, 0.5, Doubles({1, 1}));
  auto aliased = ops::ApplyAdagrad(root_, d, d, 0.1, Doubles({1, 1}));
  Init();
  Status s = Step(wrong_type);
  EXPECT_TRUE(IsInvalidArgument(s)) << s;
  EXPECT_THAT(Message(s), HasSubstr("var w has dtype float, but the update is double"));
  s = Step(aliased);
  EXPECT_TRUE(IsInvalidArgument(s)) << s;
  EXPECT_THAT(Message(s), HasSubstr("var and accum are the same variable d"));
}

TEST_F(TrainingTest, SparseErrorsChangeNothing) {
  auto w = Var("w", Doubles({1, 1, 2, 2, 3, 3}, TensorShape({3, 2})));
  auto accum = Var("accum", Doubles(std::vector<double>(6, 1), TensorShape({3, 2})));
  auto scalar = Var("scalar", Tensor::Scalar(1.0));
  // Index 0 is valid and comes first: it must not be applied either.
  auto out_of_range =
      ops::SparseApplyAdagrad(root_, w, accum, 0.1, Doubles({1, 1, 1, 1}, TensorShape({2, 2})),
                              Tensor::FromVector<int64_t>({0, 3}));
  auto negative = ops::SparseApplyGradientDescent(
      root_, w, 0.1, Doubles({1, 1}, TensorShape({1, 2})), Tensor::FromVector<int32_t>({-1}));
  auto bad_grad = ops::SparseApplyGradientDescent(root_, w, 0.1, Doubles({1, 1, 1}),
                                                  Tensor::FromVector<int32_t>({0}));
  auto rank0 = ops::SparseApplyGradientDescent(root_, scalar, 0.1, Doubles({1}),
                                               Tensor::FromVector<int32_t>({0}));
  Init();
  Status s = Step(out_of_range);
  EXPECT_TRUE(IsInvalidArgument(s)) << s;
  EXPECT_THAT(Message(s), HasSubstr("indices[1] = 3 is not in [0, 3) for variable w"));
  s = Step(negative);
  EXPECT_THAT(Message(s), HasSubstr("indices[0] = -1 is not in [0, 3) for variable w"));
  s = Step(bad_grad);
  EXPECT_TRUE(IsInvalidArgument(s)) << s;
  EXPECT_THAT(Message(s), HasSubstr("grad has shape [3], but indices [1] into variable w of "
                                    "shape [3,2] need grad of shape [1,2]"));
  s = Step(rank0);
  EXPECT_THAT(Message(s), HasSubstr("variable scalar must have rank >= 1"));
  ExpectNear(Read(w), Doubles({1, 1, 2, 2, 3, 3}, TensorShape({3, 2})));
  ExpectNear(Read(accum), Doubles(std::vector<double>(6, 1), TensorShape({3, 2})));
}

TEST_F(TrainingTest, ConcurrentUpdatesAreExact) {
  auto w = Var("w", Doubles({0, 0}));
  auto step = ops::ApplyGradientDescent(root_, w, 1.0, Doubles({-1, -2}));
  Init();
  constexpr int kThreads = 4, kSteps = 500;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kSteps; ++i) failures += !Step(step).ok();
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  ExpectNear(Read(w), Doubles({kThreads * kSteps, 2.0 * kThreads * kSteps}), 0);
}

// Two updates locking the same pair of variables in opposite roles must not deadlock.
TEST_F(TrainingTest, UpdatesSharingVariablesInOppositeRolesDoNotDeadlock) {
  auto a = Var("a", Doubles({1, 1}));
  auto b = Var("b", Doubles({1, 1}));
  auto ab = ops::ApplyAdagrad(root_, a, b, 0.001, Doubles({0.5, 0.5}));
  auto ba = ops::ApplyAdagrad(root_, b, a, 0.001, Doubles({0.5, 0.5}));
  Init();
  std::atomic<int> failures{0};
  std::thread first([&] {
    for (int i = 0; i < 300; ++i) failures += !Step(ab).ok();
  });
  std::thread second([&] {
    for (int i = 0; i < 300; ++i) failures += !Step(ba).ok();
  });
  first.join();
  second.join();
  EXPECT_EQ(failures.load(), 0);
  // As an accumulator a variable gains 0.25 per step; as a variable it loses at most
  // 0.001 * 0.5 / sqrt(1) per step.
  for (const Tensor& t : {Read(a), Read(b)}) {
    EXPECT_LE(t.flat<double>()[0], 1 + 300 * 0.25);
    EXPECT_GE(t.flat<double>()[0], 1 + 300 * 0.25 - 300 * 0.0005);
  }
}

TEST(TrainingOpsGraphTest, UpdatesAreColocatedWithTheVariable) {
  Scope root = Scope::NewRootScope();
  auto w = ops::MakeVariable(root.WithDevice("/job:ps/task:0"), "w", DT_FLOAT, {2});
  auto accum = ops::MakeVariable(root.WithDevice("/job:ps/task:0"), "accum", DT_FLOAT, {2});
  auto step = ops::ApplyAdagrad(root.WithDevice("/job:worker/task:1"), w, accum, 0.1f,
                                Tensor::FromVector<float>({1, 1}));
  auto graph = root.ToGraphDef();
  ASSERT_TRUE(graph.ok()) << graph.status();
  bool found = false;
  for (const auto& n : graph->node()) {
    if (n.name() != step.name()) continue;
    found = true;
    EXPECT_EQ(n.device(), "/job:ps/task:0");
    ASSERT_TRUE(n.attr().contains("use_locking"));
    EXPECT_TRUE(n.attr().at("use_locking").b());
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace tw
