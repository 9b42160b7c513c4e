// Optimizer update ops: definitions, CPU kernels and graph-building functions.
//
// Every op updates a variable and its slots (accumulators, moments) in place, holding the
// mutex of each variable it touches for the whole update. The mutexes are taken in address
// order, so two updates that share variables cannot deadlock, and an update is never seen
// half done by a reader or another update. All inputs are checked before anything changes:
// a failed op leaves every variable as it was.
//
// The dense and the sparse form of an algorithm share one element-wise update (an
// `Update`), applied once to the whole variable (dense) or once per index to a row (sparse).
#include "tensorweave/ops/training_ops.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_join.h"
#include "src/ops/cwise.h"
#include "src/ops/type_dispatch.h"
#include "src/ops/variable.h"

namespace tw {
namespace {

// ---- element-wise updates ----
// Each has
//   template <typename T> static void Apply(MutArray<T> var, MutArray<T>* slots,
//                                           ConstArray<T> grad, const T* s, bool nesterov);
// where `slots` are the op's slot variables (accum; m and v; ms and mom) over the same
// elements and `s` holds the op's scalar inputs in the order of its spec.

struct GradientDescentUpdate {
  // s: alpha
  template <typename T>
  static void Apply(MutArray<T> var, MutArray<T>*, ConstArray<T> grad, const T* s, bool) {
    var -= s[0] * grad;
  }
};

struct MomentumUpdate {
  // s: lr, momentum
  template <typename T>
  static void Apply(MutArray<T> var, MutArray<T>* slots, ConstArray<T> grad, const T* s,
                    bool nesterov) {
    MutArray<T>& accum = slots[0];
    const T lr = s[0], momentum = s[1];
    accum = accum * momentum + grad;
    if (nesterov) {
      var -= grad * lr + accum * (momentum * lr);
    } else {
      var -= accum * lr;
    }
  }
};

struct AdagradUpdate {
  // s: lr. The hot path of the MNIST example (a 784x256 float variable per step): two
  // vectorized passes, no temporaries.
  template <typename T>
  static void Apply(MutArray<T> var, MutArray<T>* slots, ConstArray<T> grad, const T* s, bool) {
    MutArray<T>& accum = slots[0];
    accum += grad.square();
    var -= s[0] * grad * accum.rsqrt();
  }
};

struct AdamUpdate {
  // s: beta1_power, beta2_power, lr, beta1, beta2, epsilon
  template <typename T>
  static void Apply(MutArray<T> var, MutArray<T>* slots, ConstArray<T> grad, const T* s,
                    bool nesterov) {
    MutArray<T>& m = slots[0];
    MutArray<T>& v = slots[1];
    const T beta1_power = s[0], beta2_power = s[1], lr = s[2], beta1 = s[3], beta2 = s[4],
            epsilon = s[5];
    const T lr_t = lr * std::sqrt(T(1) - beta2_power) / (T(1) - beta1_power);
    m += (grad - m) * (T(1) - beta1);
    v += (grad.square() - v) * (T(1) - beta2);
    if (nesterov) {
      var -= (grad * (T(1) - beta1) + beta1 * m) * lr_t / (v.sqrt() + epsilon);
    } else {
      var -= m * lr_t / (v.sqrt() + epsilon);
    }
  }
};

struct RMSPropUpdate {
  // s: lr, rho, momentum, epsilon. As TensorFlow's kernel: ms += (grad^2 - ms) * (1 - rho),
  // which is ms = rho * ms + (1 - rho) * grad^2.
  template <typename T>
  static void Apply(MutArray<T> var, MutArray<T>* slots, ConstArray<T> grad, const T* s, bool) {
    MutArray<T>& ms = slots[0];
    MutArray<T>& mom = slots[1];
    const T lr = s[0], rho = s[1], momentum = s[2], epsilon = s[3];
    ms += (grad.square() - ms) * (T(1) - rho);
    mom = mom * momentum + grad * lr / (ms + epsilon).sqrt();
    var -= mom;
  }
};

// FTRL-Proximal (McMahan et al., as TensorFlow's ApplyFtrl and ApplyFtrlV2 kernels):
// s: lr, l1, l2, l2_shrinkage, lr_power (kShrinkage: whether s holds l2_shrinkage; without,
// it is 0). The accumulator grows by grad^2 (not the shrunk gradient); the variable is the
// closed-form minimizer of the linear term plus the L1 and L2 penalties.
template <bool kShrinkage>
struct FtrlUpdate {
  template <typename T>
  static void Apply(MutArray<T> var, MutArray<T>* slots, ConstArray<T> grad, const T* s, bool) {
    MutArray<T>& accum = slots[0];
    MutArray<T>& linear = slots[1];
    const T lr = s[0], l1 = s[1], l2 = s[2];
    const T shrinkage = kShrinkage ? s[3] : T(0);
    const T lr_power = kShrinkage ? s[4] : s[3];
    const bool square_root = lr_power == T(-0.5);
    for (Eigen::Index i = 0; i < var.size(); ++i) {
      const T g = grad[i];
      const T new_accum = accum[i] + g * g;
      const T new_power = square_root ? std::sqrt(new_accum) : std::pow(new_accum, -lr_power);
      const T old_power = square_root ? std::sqrt(accum[i]) : std::pow(accum[i], -lr_power);
      linear[i] += g + T(2) * shrinkage * var[i] - (new_power - old_power) / lr * var[i];
      const T quadratic = new_power / lr + T(2) * l2;
      var[i] =
          std::abs(linear[i]) > l1 ? ((linear[i] > T(0) ? l1 : -l1) - linear[i]) / quadratic : T(0);
      accum[i] = new_accum;
    }
  }
  // TensorFlow's checks of the scalars, before anything changes; null when they hold.
  template <typename T>
  static const char* Check(const T* s) {
    const T lr_power = kShrinkage ? s[4] : s[3];
    if (!(s[0] > T(0))) return "lr is not a positive scalar";
    if (!(s[1] >= T(0))) return "l1 regularization strength is not a non-negative scalar";
    if (!(s[2] >= T(0))) return "l2 regularization strength is not a non-negative scalar";
    if (kShrinkage && !(s[3] >= T(0))) {
      return "l2 shrinkage regularization strength is not a non-negative scalar";
    }
    if (!(lr_power <= T(0))) return "lr_power is not a non-positive scalar";
    return nullptr;
  }
};

// ---- op specs: where each input is ----

struct ScalarInput {
  int index;
  const char* name;
};

// kOp, kUpdate, kVars (names of the resource inputs 0..n-1: the variable, then its slots),
// kScalars, kGrad, kIndices (-1 for dense ops), kNesterov (whether use_nesterov exists).
struct GradientDescentSpec {
  static constexpr char kOp[] = "ApplyGradientDescent";
  using Update = GradientDescentUpdate;
  static constexpr std::array<const char*, 1> kVars{"var"};
  static constexpr std::array<ScalarInput, 1> kScalars{{{1, "alpha"}}};
  static constexpr int kGrad = 2, kIndices = -1;
  static constexpr bool kNesterov = false;
};
struct MomentumSpec {
  static constexpr char kOp[] = "ApplyMomentum";
  using Update = MomentumUpdate;
  static constexpr std::array<const char*, 2> kVars{"var", "accum"};
  static constexpr std::array<ScalarInput, 2> kScalars{{{2, "lr"}, {4, "momentum"}}};
  static constexpr int kGrad = 3, kIndices = -1;
  static constexpr bool kNesterov = true;
};
struct AdagradSpec {
  static constexpr char kOp[] = "ApplyAdagrad";
  using Update = AdagradUpdate;
  static constexpr std::array<const char*, 2> kVars{"var", "accum"};
  static constexpr std::array<ScalarInput, 1> kScalars{{{2, "lr"}}};
  static constexpr int kGrad = 3, kIndices = -1;
  static constexpr bool kNesterov = false;
};
struct AdamSpec {
  static constexpr char kOp[] = "ApplyAdam";
  using Update = AdamUpdate;
  static constexpr std::array<const char*, 3> kVars{"var", "m", "v"};
  static constexpr std::array<ScalarInput, 6> kScalars{{{3, "beta1_power"},
                                                        {4, "beta2_power"},
                                                        {5, "lr"},
                                                        {6, "beta1"},
                                                        {7, "beta2"},
                                                        {8, "epsilon"}}};
  static constexpr int kGrad = 9, kIndices = -1;
  static constexpr bool kNesterov = true;
};
struct RMSPropSpec {
  static constexpr char kOp[] = "ApplyRMSProp";
  using Update = RMSPropUpdate;
  static constexpr std::array<const char*, 3> kVars{"var", "ms", "mom"};
  static constexpr std::array<ScalarInput, 4> kScalars{
      {{3, "lr"}, {4, "rho"}, {5, "momentum"}, {6, "epsilon"}}};
  static constexpr int kGrad = 7, kIndices = -1;
  static constexpr bool kNesterov = false;
};
struct SparseGradientDescentSpec {
  static constexpr char kOp[] = "SparseApplyGradientDescent";
  using Update = GradientDescentUpdate;
  static constexpr std::array<const char*, 1> kVars{"var"};
  static constexpr std::array<ScalarInput, 1> kScalars{{{1, "alpha"}}};
  static constexpr int kGrad = 2, kIndices = 3;
  static constexpr bool kNesterov = false;
};
struct SparseMomentumSpec {
  static constexpr char kOp[] = "SparseApplyMomentum";
  using Update = MomentumUpdate;
  static constexpr std::array<const char*, 2> kVars{"var", "accum"};
  static constexpr std::array<ScalarInput, 2> kScalars{{{2, "lr"}, {5, "momentum"}}};
  static constexpr int kGrad = 3, kIndices = 4;
  static constexpr bool kNesterov = true;
};
struct SparseAdagradSpec {
  static constexpr char kOp[] = "SparseApplyAdagrad";
  using Update = AdagradUpdate;
  static constexpr std::array<const char*, 2> kVars{"var", "accum"};
  static constexpr std::array<ScalarInput, 1> kScalars{{{2, "lr"}}};
  static constexpr int kGrad = 3, kIndices = 4;
  static constexpr bool kNesterov = false;
};
struct SparseAdamSpec {
  static constexpr char kOp[] = "SparseApplyAdam";
  using Update = AdamUpdate;
  static constexpr std::array<const char*, 3> kVars{"var", "m", "v"};
  static constexpr std::array<ScalarInput, 6> kScalars = AdamSpec::kScalars;
  static constexpr int kGrad = 9, kIndices = 10;
  static constexpr bool kNesterov = true;
};
struct SparseRMSPropSpec {
  static constexpr char kOp[] = "SparseApplyRMSProp";
  using Update = RMSPropUpdate;
  static constexpr std::array<const char*, 3> kVars{"var", "ms", "mom"};
  static constexpr std::array<ScalarInput, 4> kScalars = RMSPropSpec::kScalars;
  static constexpr int kGrad = 7, kIndices = 8;
  static constexpr bool kNesterov = false;
};

struct FtrlSpec {
  static constexpr char kOp[] = "ApplyFtrl";
  using Update = FtrlUpdate<false>;
  static constexpr std::array<const char*, 3> kVars{"var", "accum", "linear"};
  static constexpr std::array<ScalarInput, 4> kScalars{
      {{4, "lr"}, {5, "l1"}, {6, "l2"}, {7, "lr_power"}}};
  static constexpr int kGrad = 3, kIndices = -1;
  static constexpr bool kNesterov = false;
};
struct FtrlV2Spec {
  static constexpr char kOp[] = "ApplyFtrlV2";
  using Update = FtrlUpdate<true>;
  static constexpr std::array<const char*, 3> kVars{"var", "accum", "linear"};
  static constexpr std::array<ScalarInput, 5> kScalars{
      {{4, "lr"}, {5, "l1"}, {6, "l2"}, {7, "l2_shrinkage"}, {8, "lr_power"}}};
  static constexpr int kGrad = 3, kIndices = -1;
  static constexpr bool kNesterov = false;
};
struct SparseFtrlSpec {
  static constexpr char kOp[] = "SparseApplyFtrl";
  using Update = FtrlUpdate<false>;
  static constexpr std::array<const char*, 3> kVars{"var", "accum", "linear"};
  static constexpr std::array<ScalarInput, 4> kScalars{
      {{5, "lr"}, {6, "l1"}, {7, "l2"}, {8, "lr_power"}}};
  static constexpr int kGrad = 3, kIndices = 4;
  static constexpr bool kNesterov = false;
};
struct SparseFtrlV2Spec {
  static constexpr char kOp[] = "SparseApplyFtrlV2";
  using Update = FtrlUpdate<true>;
  static constexpr std::array<const char*, 3> kVars{"var", "accum", "linear"};
  static constexpr std::array<ScalarInput, 5> kScalars{
      {{5, "lr"}, {6, "l1"}, {7, "l2"}, {8, "l2_shrinkage"}, {9, "lr_power"}}};
  static constexpr int kGrad = 3, kIndices = 4;
  static constexpr bool kNesterov = false;
};

// Updates whose scalars need checking (FTRL's) have Check; the others take any values.
template <typename Update, typename T>
const char* CheckScalars(const T* s) {
  if constexpr (requires { Update::template Check<T>(s); }) {
    return Update::template Check<T>(s);
  } else {
    return nullptr;
  }
}

constexpr int kMaxVars = 3;
constexpr int kMaxScalars = 6;

// Holds the mutexes of the distinct variables of one update, taken in address order.
class VariableLocks {
 public:
  explicit VariableLocks(std::vector<VariableResource*> vars) ABSL_NO_THREAD_SAFETY_ANALYSIS
      : vars_(std::move(vars)) {
    std::sort(vars_.begin(), vars_.end(), std::less<>());
    vars_.erase(std::unique(vars_.begin(), vars_.end()), vars_.end());
    for (VariableResource* v : vars_) v->mu()->Lock();
  }
  ~VariableLocks() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    for (auto it = vars_.rbegin(); it != vars_.rend(); ++it) (*it)->mu()->Unlock();
  }
  VariableLocks(const VariableLocks&) = delete;
  VariableLocks& operator=(const VariableLocks&) = delete;

 private:
  std::vector<VariableResource*> vars_;
};

int64_t IndexAt(const Tensor& indices, int64_t i) {
  return indices.dtype() == DT_INT32 ? indices.flat<int32_t>()[i] : indices.flat<int64_t>()[i];
}

template <typename Spec>
class ApplyOp : public OpKernel {
 public:
  static constexpr int kNumVars = static_cast<int>(Spec::kVars.size());
  static constexpr bool kSparse = Spec::kIndices >= 0;

  explicit ApplyOp(OpKernelConstruction* c) : OpKernel(c) {
    if constexpr (Spec::kNesterov) c->SetStatus(c->GetAttr("use_nesterov", &nesterov_));
  }

  void Compute(OpKernelContext* ctx) override {
    const DataType dtype = input_type(Spec::kGrad);
    std::array<std::shared_ptr<VariableResource>, kMaxVars> vars;
    std::vector<VariableResource*> raw;
    for (int i = 0; i < kNumVars; ++i) {
      auto var = LookupVariable(ctx, ctx->input(i));
      TW_OP_REQUIRES_OK(ctx, var.status());
      vars[i] = *std::move(var);
      TW_OP_REQUIRES(ctx, vars[i]->dtype() == dtype,
                     errors::InvalidArgument(Where(), Spec::kVars[i], " ", vars[i]->name(),
                                             " has dtype ", DataTypeName(vars[i]->dtype()),
                                             ", but the update is ", DataTypeName(dtype)));
      for (int j = 0; j < i; ++j) {
        // Aliased slots would make the update read what it has just written.
        TW_OP_REQUIRES(ctx, vars[j] != vars[i],
                       errors::InvalidArgument(Where(), Spec::kVars[j], " and ", Spec::kVars[i],
                                               " are the same variable ", vars[i]->name()));
      }
      raw.push_back(vars[i].get());
    }
    for (const ScalarInput& s : Spec::kScalars) {
      const Tensor& t = ctx->input(s.index);
      TW_OP_REQUIRES(ctx, t.rank() == 0,
                     errors::InvalidArgument(Where(), s.name, " must be a scalar, got shape ",
                                             t.shape().DebugString()));
    }
    VariableLocks locks(std::move(raw));
    UpdateLocked(ctx, vars);
  }

 private:
  std::string Where() const { return std::string(Spec::kOp) + " node " + name() + ": "; }

  // Checks the values and applies the update; the caller holds every variable's mutex.
  void UpdateLocked(OpKernelContext* ctx,
                    const std::array<std::shared_ptr<VariableResource>, kMaxVars>& vars)
      ABSL_NO_THREAD_SAFETY_ANALYSIS {
    std::array<Tensor*, kMaxVars> values{};
    for (int i = 0; i < kNumVars; ++i) {
      TW_OP_REQUIRES(ctx, vars[i]->initialized(),
                     errors::FailedPrecondition("Attempting to use uninitialized value ",
                                                vars[i]->name(), " (", Spec::kVars[i], " of ",
                                                Spec::kOp, " node ", name(), ")"));
      values[i] = vars[i]->mutable_value();
      // Shapes are checked here, under the locks: Assign with validate_shape=false may
      // have changed a shape since the last step.
      TW_OP_REQUIRES(ctx, i == 0 || values[i]->shape() == values[0]->shape(),
                     errors::InvalidArgument(Where(), Spec::kVars[i], " ", vars[i]->name(),
                                             " has shape ", values[i]->shape().DebugString(),
                                             ", but variable ", vars[0]->name(), " has shape ",
                                             values[0]->shape().DebugString()));
    }
    const TensorShape& var_shape = values[0]->shape();
    const Tensor& grad = ctx->input(Spec::kGrad);
    std::vector<int64_t> rows;  // sparse: the row of each update
    int64_t row_size = 0;
    if constexpr (!kSparse) {
      TW_OP_REQUIRES(ctx, grad.shape() == var_shape,
                     errors::InvalidArgument(Where(), "grad has shape ", grad.shape().DebugString(),
                                             ", but variable ", vars[0]->name(), " has shape ",
                                             var_shape.DebugString()));
    } else {
      const Tensor& indices = ctx->input(Spec::kIndices);
      TW_OP_REQUIRES(ctx, var_shape.rank() >= 1,
                     errors::InvalidArgument(Where(), "variable ", vars[0]->name(),
                                             " must have rank >= 1 for a sparse update, has shape ",
                                             var_shape.DebugString()));
      std::vector<int64_t> want = indices.shape().dims();
      want.insert(want.end(), var_shape.dims().begin() + 1, var_shape.dims().end());
      TW_OP_REQUIRES(ctx, grad.shape().dims() == want,
                     errors::InvalidArgument(Where(), "grad has shape ", grad.shape().DebugString(),
                                             ", but indices ", indices.shape().DebugString(),
                                             " into variable ", vars[0]->name(), " of shape ",
                                             var_shape.DebugString(), " need grad of shape [",
                                             absl::StrJoin(want, ","), "]"));
      const int64_t num_rows = var_shape.dim(0);
      row_size = num_rows == 0 ? 0 : values[0]->num_elements() / num_rows;
      rows.resize(static_cast<size_t>(indices.num_elements()));
      for (size_t i = 0; i < rows.size(); ++i) {
        rows[i] = IndexAt(indices, static_cast<int64_t>(i));
        TW_OP_REQUIRES(
            ctx, rows[i] >= 0 && rows[i] < num_rows,
            errors::InvalidArgument(Where(), "indices[", i, "] = ", rows[i], " is not in [0, ",
                                    num_rows, ") for variable ", vars[0]->name()));
      }
    }
    // Every input is valid but the scalars' values, which are checked before anything
    // changes: from there on nothing fails.
    const char* bad_scalar = nullptr;
    const bool known = Dispatch(FloatTypes{}, grad.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      std::array<T, kMaxScalars> s{};
      for (size_t i = 0; i < Spec::kScalars.size(); ++i) {
        s[i] = ctx->input(Spec::kScalars[i].index).template scalar<T>();
      }
      bad_scalar = CheckScalars<typename Spec::Update, T>(s.data());
      if (bad_scalar != nullptr) return;
      std::array<T*, kMaxVars> data{};
      for (int i = 0; i < kNumVars; ++i) data[i] = values[i]->template flat<T>().data();
      const T* g = grad.template flat<T>().data();
      if constexpr (!kSparse) {
        // Block by block: an update of several passes (Adagrad: accum, then var) then reads
        // each block from the L1 cache in its later passes instead of from memory.
        const int64_t n = values[0]->num_elements();
        for (int64_t offset = 0; offset < n; offset += kDenseBlock) {
          Run<T>(data, offset, g + offset, std::min(kDenseBlock, n - offset), s.data());
        }
      } else {
        for (size_t i = 0; i < rows.size(); ++i) {
          Run<T>(data, rows[i] * row_size, g + static_cast<int64_t>(i) * row_size, row_size,
                 s.data());
        }
      }
    });
    TW_OP_REQUIRES(ctx, known, UnsupportedType(*this, grad.dtype()));
    TW_OP_REQUIRES(ctx, bad_scalar == nullptr, errors::InvalidArgument(Where(), bad_scalar));
  }

  // Elements per block of a dense update: with up to 4 arrays of 8-byte values, 64 KiB.
  static constexpr int64_t kDenseBlock = 2048;

  // Applies the update to elements [offset, offset + n) of the variable and its slots.
  template <typename T>
  void Run(const std::array<T*, kMaxVars>& data, int64_t offset, const T* grad, int64_t n,
           const T* s) const {
    const auto size = static_cast<Eigen::Index>(n);
    MutArray<T> var(data[0] + offset, size);
    // Maps cannot be default-constructed: slots beyond the op's count alias the variable and
    // are never touched.
    std::array<MutArray<T>, kMaxVars - 1> slots{
        MutArray<T>((kNumVars > 1 ? data[1] : data[0]) + offset, size),
        MutArray<T>((kNumVars > 2 ? data[2] : data[0]) + offset, size)};
    Spec::Update::template Apply<T>(var, slots.data(), ConstArray<T>(grad, size), s, nesterov_);
  }

  bool nesterov_ = false;
};

TW_REGISTER_OP("ApplyGradientDescent")
    .Input("var: resource")
    .Input("alpha: T")
    .Input("delta: T")
    .Attr("T: {float, double}")
    .Attr("use_locking: bool = false")
    .SetIsStateful()
    .Doc("var -= alpha * delta, in place.");
TW_REGISTER_KERNEL("ApplyGradientDescent", "CPU", ApplyOp<GradientDescentSpec>);

TW_REGISTER_OP("ApplyMomentum")
    .Input("var: resource")
    .Input("accum: resource")
    .Input("lr: T")
    .Input("grad: T")
    .Input("momentum: T")
    .Attr("use_nesterov: bool = false")
    .Attr("T: {float, double}")
    .Attr("use_locking: bool = false")
    .SetIsStateful()
    .Doc("accum = accum * momentum + grad; var -= lr * accum.");
TW_REGISTER_KERNEL("ApplyMomentum", "CPU", ApplyOp<MomentumSpec>);

TW_REGISTER_OP("ApplyAdagrad")
    .Input("var: resource")
    .Input("accum: resource")
    .Input("lr: T")
    .Input("grad: T")
    .Attr("T: {float, double}")
    .Attr("use_locking: bool = false")
    .SetIsStateful()
    .Doc("accum += grad^2; var -= lr * grad / sqrt(accum).");
TW_REGISTER_KERNEL("ApplyAdagrad", "CPU", ApplyOp<AdagradSpec>);

TW_REGISTER_OP("ApplyAdam")
    .Input("var: resource")
    .Input("m: resource")
    .Input("v: resource")
    .Input("beta1_power: T")
    .Input("beta2_power: T")
    .Input("lr: T")
    .Input("beta1: T")
    .Input("beta2: T")
    .Input("epsilon: T")
    .Input("grad: T")
    .Attr("use_nesterov: bool = false")
    .Attr("T: {float, double}")
    .Attr("use_locking: bool = false")
    .SetIsStateful()
    .Doc("The Adam update of var and its moments m and v.");
TW_REGISTER_KERNEL("ApplyAdam", "CPU", ApplyOp<AdamSpec>);

TW_REGISTER_OP("ApplyRMSProp")
    .Input("var: resource")
    .Input("ms: resource")
    .Input("mom: resource")
    .Input("lr: T")
    .Input("rho: T")
    .Input("momentum: T")
    .Input("epsilon: T")
    .Input("grad: T")
    .Attr("T: {float, double}")
    .Attr("use_locking: bool = false")
    .SetIsStateful()
    .Doc(
        "ms = rho * ms + (1 - rho) * grad^2; mom = momentum * mom + lr * grad / sqrt(ms + "
        "epsilon); var -= mom.");
TW_REGISTER_KERNEL("ApplyRMSProp", "CPU", ApplyOp<RMSPropSpec>);

TW_REGISTER_OP("SparseApplyGradientDescent")
    .Input("var: resource")
    .Input("alpha: T")
    .Input("grad: T")
    .Input("indices: Tindices")
    .Attr("Tindices: {int32, int64}")
    .Attr("T: {float, double}")
    .Attr("use_locking: bool = false")
    .SetIsStateful()
    .Doc("var[indices] -= alpha * grad, once per index.");
TW_REGISTER_KERNEL("SparseApplyGradientDescent", "CPU", ApplyOp<SparseGradientDescentSpec>);

TW_REGISTER_OP("SparseApplyMomentum")
    .Input("var: resource")
    .Input("accum: resource")
    .Input("lr: T")
    .Input("grad: T")
    .Input("indices: Tindices")
    .Input("momentum: T")
    .Attr("Tindices: {int32, int64}")
    .Attr("use_nesterov: bool = false")
    .Attr("T: {float, double}")
    .Attr("use_locking: bool = false")
    .SetIsStateful()
    .Doc("ApplyMomentum on the rows indices, once per index.");
TW_REGISTER_KERNEL("SparseApplyMomentum", "CPU", ApplyOp<SparseMomentumSpec>);

TW_REGISTER_OP("SparseApplyAdagrad")
    .Input("var: resource")
    .Input("accum: resource")
    .Input("lr: T")
    .Input("grad: T")
    .Input("indices: Tindices")
    .Attr("Tindices: {int32, int64}")
    .Attr("T: {float, double}")
    .Attr("use_locking: bool = false")
    .SetIsStateful()
    .Doc("ApplyAdagrad on the rows indices, once per index.");
TW_REGISTER_KERNEL("SparseApplyAdagrad", "CPU", ApplyOp<SparseAdagradSpec>);

TW_REGISTER_OP("SparseApplyAdam")
    .Input("var: resource")
    .Input("m: resource")
    .Input("v: resource")
    .Input("beta1_power: T")
    .Input("beta2_power: T")
    .Input("lr: T")
    .Input("beta1: T")
    .Input("beta2: T")
    .Input("epsilon: T")
    .Input("grad: T")
    .Input("indices: Tindices")
    .Attr("Tindices: {int32, int64}")
    .Attr("use_nesterov: bool = false")
    .Attr("T: {float, double}")
    .Attr("use_locking: bool = false")
    .SetIsStateful()
    .Doc("Lazy Adam: ApplyAdam on the rows indices only, once per index.");
TW_REGISTER_KERNEL("SparseApplyAdam", "CPU", ApplyOp<SparseAdamSpec>);

TW_REGISTER_OP("SparseApplyRMSProp")
    .Input("var: resource")
    .Input("ms: resource")
    .Input("mom: resource")
    .Input("lr: T")
    .Input("rho: T")
    .Input("momentum: T")
    .Input("epsilon: T")
    .Input("grad: T")
    .Input("indices: Tindices")
    .Attr("Tindices: {int32, int64}")
    .Attr("T: {float, double}")
    .Attr("use_locking: bool = false")
    .SetIsStateful()
    .Doc("ApplyRMSProp on the rows indices, once per index.");
TW_REGISTER_KERNEL("SparseApplyRMSProp", "CPU", ApplyOp<SparseRMSPropSpec>);

TW_REGISTER_OP("ApplyFtrl")
    .Input("var: resource")
    .Input("accum: resource")
    .Input("linear: resource")
    .Input("grad: T")
    .Input("lr: T")
    .Input("l1: T")
    .Input("l2: T")
    .Input("lr_power: T")
    .Attr("T: {float, double}")
    .Attr("use_locking: bool = false")
    .SetIsStateful()
    .Doc(
        "FTRL-Proximal: accum += grad^2; linear += grad - (accum_new^-lr_power - "
        "accum^-lr_power) / lr * var; var = (sign(linear) * l1 - linear) / "
        "(accum_new^-lr_power / lr + 2 * l2) where |linear| > l1, else 0.");
TW_REGISTER_KERNEL("ApplyFtrl", "CPU", ApplyOp<FtrlSpec>);

TW_REGISTER_OP("ApplyFtrlV2")
    .Input("var: resource")
    .Input("accum: resource")
    .Input("linear: resource")
    .Input("grad: T")
    .Input("lr: T")
    .Input("l1: T")
    .Input("l2: T")
    .Input("l2_shrinkage: T")
    .Input("lr_power: T")
    .Attr("T: {float, double}")
    .Attr("use_locking: bool = false")
    .SetIsStateful()
    .Doc("ApplyFtrl whose linear term takes grad + 2 * l2_shrinkage * var.");
TW_REGISTER_KERNEL("ApplyFtrlV2", "CPU", ApplyOp<FtrlV2Spec>);

TW_REGISTER_OP("SparseApplyFtrl")
    .Input("var: resource")
    .Input("accum: resource")
    .Input("linear: resource")
    .Input("grad: T")
    .Input("indices: Tindices")
    .Input("lr: T")
    .Input("l1: T")
    .Input("l2: T")
    .Input("lr_power: T")
    .Attr("Tindices: {int32, int64}")
    .Attr("T: {float, double}")
    .Attr("use_locking: bool = false")
    .SetIsStateful()
    .Doc("ApplyFtrl on the rows indices, once per index.");
TW_REGISTER_KERNEL("SparseApplyFtrl", "CPU", ApplyOp<SparseFtrlSpec>);

TW_REGISTER_OP("SparseApplyFtrlV2")
    .Input("var: resource")
    .Input("accum: resource")
    .Input("linear: resource")
    .Input("grad: T")
    .Input("indices: Tindices")
    .Input("lr: T")
    .Input("l1: T")
    .Input("l2: T")
    .Input("l2_shrinkage: T")
    .Input("lr_power: T")
    .Attr("Tindices: {int32, int64}")
    .Attr("T: {float, double}")
    .Attr("use_locking: bool = false")
    .SetIsStateful()
    .Doc("ApplyFtrlV2 on the rows indices, once per index.");
TW_REGISTER_KERNEL("SparseApplyFtrlV2", "CPU", ApplyOp<SparseFtrlV2Spec>);

}  // namespace

namespace ops {
namespace {

AttrMap Attrs(const ApplyOptions& o, bool nesterov) {
  AttrMap attrs{{"use_locking", MakeAttr(o.use_locking)}};
  if (nesterov) attrs["use_nesterov"] = MakeAttr(o.use_nesterov);
  return attrs;
}

}  // namespace

Operation ApplyGradientDescent(const Scope& scope, const Variable& var, Input alpha, Input delta,
                               const ApplyOptions& options) {
  return scope.AddNode("ApplyGradientDescent", {{var.handle}, {alpha}, {delta}},
                       Attrs(options, false));
}

Operation ApplyMomentum(const Scope& scope, const Variable& var, const Variable& accum, Input lr,
                        Input grad, Input momentum, const ApplyOptions& options) {
  return scope.AddNode("ApplyMomentum", {{var.handle}, {accum.handle}, {lr}, {grad}, {momentum}},
                       Attrs(options, true));
}

Operation ApplyAdagrad(const Scope& scope, const Variable& var, const Variable& accum, Input lr,
                       Input grad, const ApplyOptions& options) {
  return scope.AddNode("ApplyAdagrad", {{var.handle}, {accum.handle}, {lr}, {grad}},
                       Attrs(options, false));
}

Operation ApplyAdam(const Scope& scope, const Variable& var, const Variable& m, const Variable& v,
                    Input beta1_power, Input beta2_power, Input lr, Input beta1, Input beta2,
                    Input epsilon, Input grad, const ApplyOptions& options) {
  return scope.AddNode("ApplyAdam",
                       {{var.handle},
                        {m.handle},
                        {v.handle},
                        {beta1_power},
                        {beta2_power},
                        {lr},
                        {beta1},
                        {beta2},
                        {epsilon},
                        {grad}},
                       Attrs(options, true));
}

Operation ApplyRMSProp(const Scope& scope, const Variable& var, const Variable& ms,
                       const Variable& mom, Input lr, Input rho, Input momentum, Input epsilon,
                       Input grad, const ApplyOptions& options) {
  return scope.AddNode(
      "ApplyRMSProp",
      {{var.handle}, {ms.handle}, {mom.handle}, {lr}, {rho}, {momentum}, {epsilon}, {grad}},
      Attrs(options, false));
}

Operation SparseApplyGradientDescent(const Scope& scope, const Variable& var, Input alpha,
                                     Input grad, Input indices, const ApplyOptions& options) {
  return scope.AddNode("SparseApplyGradientDescent", {{var.handle}, {alpha}, {grad}, {indices}},
                       Attrs(options, false));
}

Operation SparseApplyMomentum(const Scope& scope, const Variable& var, const Variable& accum,
                              Input lr, Input grad, Input indices, Input momentum,
                              const ApplyOptions& options) {
  return scope.AddNode("SparseApplyMomentum",
                       {{var.handle}, {accum.handle}, {lr}, {grad}, {indices}, {momentum}},
                       Attrs(options, true));
}

Operation SparseApplyAdagrad(const Scope& scope, const Variable& var, const Variable& accum,
                             Input lr, Input grad, Input indices, const ApplyOptions& options) {
  return scope.AddNode("SparseApplyAdagrad",
                       {{var.handle}, {accum.handle}, {lr}, {grad}, {indices}},
                       Attrs(options, false));
}

Operation SparseApplyAdam(const Scope& scope, const Variable& var, const Variable& m,
                          const Variable& v, Input beta1_power, Input beta2_power, Input lr,
                          Input beta1, Input beta2, Input epsilon, Input grad, Input indices,
                          const ApplyOptions& options) {
  return scope.AddNode("SparseApplyAdam",
                       {{var.handle},
                        {m.handle},
                        {v.handle},
                        {beta1_power},
                        {beta2_power},
                        {lr},
                        {beta1},
                        {beta2},
                        {epsilon},
                        {grad},
                        {indices}},
                       Attrs(options, true));
}

Operation SparseApplyRMSProp(const Scope& scope, const Variable& var, const Variable& ms,
                             const Variable& mom, Input lr, Input rho, Input momentum,
                             Input epsilon, Input grad, Input indices,
                             const ApplyOptions& options) {
  return scope.AddNode("SparseApplyRMSProp",
                       {{var.handle},
                        {ms.handle},
                        {mom.handle},
                        {lr},
                        {rho},
                        {momentum},
                        {epsilon},
                        {grad},
                        {indices}},
                       Attrs(options, false));
}

Operation ApplyFtrl(const Scope& scope, const Variable& var, const Variable& accum,
                    const Variable& linear, Input grad, Input lr, Input l1, Input l2,
                    Input lr_power, const ApplyOptions& options) {
  return scope.AddNode(
      "ApplyFtrl",
      {{var.handle}, {accum.handle}, {linear.handle}, {grad}, {lr}, {l1}, {l2}, {lr_power}},
      Attrs(options, false));
}
Operation ApplyFtrlV2(const Scope& scope, const Variable& var, const Variable& accum,
                      const Variable& linear, Input grad, Input lr, Input l1, Input l2,
                      Input l2_shrinkage, Input lr_power, const ApplyOptions& options) {
  return scope.AddNode("ApplyFtrlV2",
                       {{var.handle},
                        {accum.handle},
                        {linear.handle},
                        {grad},
                        {lr},
                        {l1},
                        {l2},
                        {l2_shrinkage},
                        {lr_power}},
                       Attrs(options, false));
}
Operation SparseApplyFtrl(const Scope& scope, const Variable& var, const Variable& accum,
                          const Variable& linear, Input grad, Input indices, Input lr, Input l1,
                          Input l2, Input lr_power, const ApplyOptions& options) {
  return scope.AddNode("SparseApplyFtrl",
                       {{var.handle},
                        {accum.handle},
                        {linear.handle},
                        {grad},
                        {indices},
                        {lr},
                        {l1},
                        {l2},
                        {lr_power}},
                       Attrs(options, false));
}
Operation SparseApplyFtrlV2(const Scope& scope, const Variable& var, const Variable& accum,
                            const Variable& linear, Input grad, Input indices, Input lr, Input l1,
                            Input l2, Input l2_shrinkage, Input lr_power,
                            const ApplyOptions& options) {
  return scope.AddNode("SparseApplyFtrlV2",
                       {{var.handle},
                        {accum.handle},
                        {linear.handle},
                        {grad},
                        {indices},
                        {lr},
                        {l1},
                        {l2},
                        {l2_shrinkage},
                        {lr_power}},
                       Attrs(options, false));
}

}  // namespace ops
}  // namespace tw
