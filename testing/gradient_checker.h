// Test helper: checks symbolic gradients (tw::Gradients) against central finite differences.
//
//   Scope root = Scope::NewRootScope();
//   auto x = ops::Placeholder(root, DT_DOUBLE);
//   auto y = ops::Tanh(root, x);
//   auto error = testing::MaxGradientError(root, {x}, {Tensor::FromVector<double>({0.5, -1})}, y);
//   ASSERT_TRUE(error.ok()) << error.status();
//   EXPECT_LT(*error, 1e-8);
#ifndef TENSORWEAVE_TESTING_GRADIENT_CHECKER_H_
#define TENSORWEAVE_TESTING_GRADIENT_CHECKER_H_

#include <vector>

#include "tensorweave/scope.h"
#include "tensorweave/session.h"
#include "tensorweave/status.h"
#include "tensorweave/tensor.h"

namespace tw::testing {

struct GradientCheckOptions {
  double delta = 1e-5;  // the finite-difference step, in units of x
};

// The largest absolute difference, over every element of the Jacobian of `y` with respect
// to each of `xs` evaluated at `x_values`, between the symbolic gradient (built in `scope`
// by tw::Gradients with a one-hot grad_ys, sparse gradients densified) and central
// differences (y(x + delta) - y(x - delta)) / (2 delta). Each x is a Placeholder, fed its
// value, or a variable handle, assigned its value before each evaluation; `feeds` gives
// every other placeholder. x and y are float or double; use double for tight tolerances.
// Runs in a ClientSession on `scope`'s graph: |y| + 2 |x| steps, so keep tensors small.
// Errors: the gradient fails to build or does not exist (FailedPrecondition), a step fails.
StatusOr<double> MaxGradientError(const Scope& scope, const std::vector<Output>& xs,
                                  const std::vector<Tensor>& x_values, const Output& y,
                                  const ClientSession::FeedList& feeds = {},
                                  const GradientCheckOptions& options = {});

// Distinct double values, none near 0 or each other, in `shape`: 0.35, -0.6, 0.85, -1.1,
// ... (plus `offset`): inputs for numeric gradient checks that avoid kinks and ties.
Tensor DistinctValues(const TensorShape& shape, double offset = 0);

}  // namespace tw::testing

#endif  // TENSORWEAVE_TESTING_GRADIENT_CHECKER_H_
