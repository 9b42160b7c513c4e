#include "testing/gradient_checker.h"

#include <algorithm>
#include <cmath>

#include "tensorweave/ops/basic_ops.h"
#include "tensorweave/train/gradients.h"

namespace tw::testing {
namespace {

double Get(const Tensor& t, int64_t i) {
  return t.dtype() == DT_FLOAT ? static_cast<double>(t.flat<float>()[i]) : t.flat<double>()[i];
}

void Set(Tensor* t, int64_t i, double v) {
  if (t->dtype() == DT_FLOAT) {
    t->flat<float>()[i] = static_cast<float>(v);
  } else {
    t->flat<double>()[i] = v;
  }
}

bool IsFloat(DataType t) { return t == DT_FLOAT || t == DT_DOUBLE; }

// Runs steps of `scope`'s graph with given values of the xs: placeholders are fed, variables
// assigned first.
class Evaluator {
 public:
  Evaluator(const Scope& scope, const std::vector<Output>& xs, const ClientSession::FeedList& feeds)
      : session_(scope), xs_(xs), feeds_(feeds), assigns_(xs.size()), value_feeds_(xs.size()) {}

  // Builds, for each variable x, a placeholder of its value's type and an Assign.
  void Prepare(const Scope& scope, const std::vector<Tensor>& values) {
    for (size_t i = 0; i < xs_.size(); ++i) {
      if (xs_[i].type() != DT_RESOURCE) continue;
      value_feeds_[i] = ops::Placeholder(scope, values[i].dtype());
      assigns_[i] = scope.AddNodeOutput("Assign", {{xs_[i]}, {value_feeds_[i]}});
    }
  }

  StatusOr<std::vector<Tensor>> Run(const std::vector<Tensor>& values,
                                    const ClientSession::FeedList& extra,
                                    const std::vector<Output>& fetches) {
    ClientSession::FeedList feeds = feeds_;
    feeds.insert(feeds.end(), extra.begin(), extra.end());
    for (size_t i = 0; i < xs_.size(); ++i) {
      if (xs_[i].type() == DT_RESOURCE) {
        TW_RETURN_IF_ERROR(session_.Run({{value_feeds_[i], values[i]}}, {assigns_[i]}).status());
      } else {
        feeds.emplace_back(xs_[i], values[i]);
      }
    }
    return session_.Run(feeds, fetches);
  }

 private:
  ClientSession session_;
  std::vector<Output> xs_;
  ClientSession::FeedList feeds_;
  std::vector<Output> assigns_;
  std::vector<Output> value_feeds_;
};

}  // namespace

StatusOr<double> MaxGradientError(const Scope& scope, const std::vector<Output>& xs,
                                  const std::vector<Tensor>& x_values, const Output& y,
                                  const ClientSession::FeedList& feeds,
                                  const GradientCheckOptions& options) {
  if (xs.size() != x_values.size()) {
    return errors::InvalidArgument("MaxGradientError: ", xs.size(), " xs but ", x_values.size(),
                                   " values");
  }
  for (const Tensor& v : x_values) {
    if (!IsFloat(v.dtype())) {
      return errors::InvalidArgument("MaxGradientError: x values must be float or double, got ",
                                     DataTypeName(v.dtype()));
    }
  }
  if (!IsFloat(y.type())) {
    return errors::InvalidArgument("MaxGradientError: y must be float or double");
  }
  const Output dy = ops::Placeholder(scope, y.type());
  TW_ASSIGN_OR_RETURN(std::vector<Gradient> grads, Gradients(scope, {y}, xs, {dy}));
  std::vector<Output> dense;
  for (const Gradient& g : grads) {
    TW_ASSIGN_OR_RETURN(Output d, ToDense(scope, g));
    dense.push_back(d);
  }
  Evaluator eval(scope, xs, feeds);
  eval.Prepare(scope, x_values);
  TW_RETURN_IF_ERROR(scope.status());

  TW_ASSIGN_OR_RETURN(std::vector<Tensor> y0, eval.Run(x_values, {}, {y}));
  const int64_t ny = y0[0].num_elements();

  // jacobian[i][j * nx + k]: d y[j] / d x_i[k], symbolic then numeric.
  std::vector<std::vector<double>> symbolic(xs.size()), numeric(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    symbolic[i].assign(static_cast<size_t>(ny * x_values[i].num_elements()), 0);
    numeric[i] = symbolic[i];
  }
  for (int64_t j = 0; j < ny; ++j) {
    Tensor seed(y.type(), y0[0].shape());
    for (int64_t e = 0; e < ny; ++e) Set(&seed, e, e == j ? 1 : 0);
    TW_ASSIGN_OR_RETURN(std::vector<Tensor> g, eval.Run(x_values, {{dy, seed}}, dense));
    for (size_t i = 0; i < xs.size(); ++i) {
      const int64_t nx = x_values[i].num_elements();
      if (g[i].num_elements() != nx) {
        return errors::Internal("MaxGradientError: the gradient of xs[", i, "] has shape ",
                                g[i].shape().DebugString(), ", x has shape ",
                                x_values[i].shape().DebugString());
      }
      for (int64_t k = 0; k < nx; ++k) symbolic[i][j * nx + k] = Get(g[i], k);
    }
  }
  for (size_t i = 0; i < xs.size(); ++i) {
    const int64_t nx = x_values[i].num_elements();
    for (int64_t k = 0; k < nx; ++k) {
      // A fresh copy per step: y may share the fed buffer (Identity, Reshape).
      const double x = Get(x_values[i], k);
      std::vector<Tensor> values = x_values;
      values[i] = x_values[i].Copy();
      Set(&values[i], k, x + options.delta);
      TW_ASSIGN_OR_RETURN(std::vector<Tensor> plus, eval.Run(values, {}, {y}));
      values[i] = x_values[i].Copy();
      Set(&values[i], k, x - options.delta);
      TW_ASSIGN_OR_RETURN(std::vector<Tensor> minus, eval.Run(values, {}, {y}));
      for (int64_t j = 0; j < ny; ++j) {
        numeric[i][j * nx + k] = (Get(plus[0], j) - Get(minus[0], j)) / (2 * options.delta);
      }
    }
  }
  double error = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    for (size_t e = 0; e < symbolic[i].size(); ++e) {
      const double diff = std::abs(symbolic[i][e] - numeric[i][e]);
      error = std::isnan(diff) ? diff : std::max(error, diff);
      if (std::isnan(error)) return error;
    }
  }
  return error;
}

Tensor DistinctValues(const TensorShape& shape, double offset) {
  std::vector<double> v(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = (i % 2 == 0 ? 1 : -1) * (0.35 + 0.25 * static_cast<double>(i)) + offset;
  }
  return Tensor::FromVector<double>(v, shape);
}

}  // namespace tw::testing
