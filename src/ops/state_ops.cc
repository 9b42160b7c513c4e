// Variables: definitions, CPU kernels, gradients and graph-building functions.
//
// A Variable node outputs a handle naming (device, container, name); every op that uses the
// variable takes the handle and finds the VariableResource in its device's ResourceMgr, so
// the same name on the same device is the same variable for every graph and session.
#include "tensorweave/ops/state_ops.h"

#include <algorithm>
#include <limits>
#include <type_traits>

#include "src/framework/resource_lookup.h"
#include "src/graph/gradient_registry.h"
#include "src/ops/array_grad.h"
#include "src/ops/cwise.h"
#include "src/ops/resource_attrs.h"
#include "src/ops/type_dispatch.h"
#include "src/ops/variable.h"

namespace tw {

StatusOr<std::shared_ptr<VariableResource>> LookupVariable(OpKernelContext* ctx,
                                                           const Tensor& handle) {
  auto var = LookupResource<VariableResource>(*ctx, handle);
  if (IsNotFound(var.status())) {
    const ResourceHandle& h = handle.flat<ResourceHandle>()[0];
    return errors::FailedPrecondition("Attempting to use uninitialized value ", h.name,
                                      " (the variable does not exist on ", h.device, ")");
  }
  return var;
}

namespace {

// Parses the container and shared_name attributes the way TensorFlow does.
Status ResourceName(OpKernelConstruction* c, std::string* container, std::string* name) {
  TW_RETURN_IF_ERROR(c->GetAttr("container", container));
  TW_RETURN_IF_ERROR(c->GetAttr("shared_name", name));
  TW_RETURN_IF_ERROR(ValidateContainerAttr(*container));
  TW_RETURN_IF_ERROR(ValidateSharedNameAttr(*name));
  if (name->empty()) *name = c->def().name();
  return OkStatus();
}

// ---- Variable ----
TW_REGISTER_OP("Variable")
    .Output("resource: resource")
    .Attr("dtype: type")
    .Attr("shape: shape = ?")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .SetIsStateful()
    .Doc("A variable on this device, created on first use and shared by name.");

class VariableOp : public OpKernel {
 public:
  explicit VariableOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string container, name;
    Status s = ResourceName(c, &container, &name);
    if (s.ok()) s = c->GetAttr("dtype", &dtype_);
    if (s.ok()) s = c->GetAttr("shape", &shape_);
    if (s.ok() && (dtype_ == DT_RESOURCE || dtype_ == DT_INVALID)) {
      s = errors::InvalidArgument("a variable cannot hold ", DataTypeName(dtype_));
    }
    c->SetStatus(s);
    ResourceMgr* rm = c->device()->resource_manager();
    handle_ = Tensor::Scalar(ResourceHandle{c->device()->name(),
                                            container.empty() ? rm->default_container() : container,
                                            name, VariableResource::kTypeName});
  }

  void Compute(OpKernelContext* ctx) override {
    const ResourceHandle& h = handle_.flat<ResourceHandle>()[0];
    auto var = ctx->resource_manager()->LookupOrCreate<VariableResource>(
        h.container, h.name, [&]() -> StatusOr<std::shared_ptr<VariableResource>> {
          return std::make_shared<VariableResource>(h.name, dtype_, shape_);
        });
    TW_OP_REQUIRES_OK(ctx, var.status());
    TW_OP_REQUIRES(
        ctx, (*var)->dtype() == dtype_,
        errors::InvalidArgument("variable ", h.name, " already exists with dtype ",
                                DataTypeName((*var)->dtype()), ", not ", DataTypeName(dtype_)));
    ctx->set_output(0, handle_);
  }

 private:
  DataType dtype_ = DT_INVALID;
  PartialShape shape_;
  Tensor handle_;
};
TW_REGISTER_KERNEL("Variable", "CPU", VariableOp);

// Checks `value` against the variable's declared dtype and shape.
Status CheckValue(const VariableResource& var, const Tensor& value, bool validate_shape) {
  if (value.dtype() != var.dtype()) {
    return errors::InvalidArgument("cannot assign a ", DataTypeName(value.dtype()),
                                   " value to variable ", var.name(), " of dtype ",
                                   DataTypeName(var.dtype()));
  }
  if (validate_shape && !var.shape().IsCompatibleWith(value.shape())) {
    return errors::InvalidArgument("cannot assign a value of shape ", value.shape().DebugString(),
                                   " to variable ", var.name(), " of shape ",
                                   var.shape().DebugString());
  }
  return OkStatus();
}

// Runs `fn(var, &var.value())` on the initialized variable named by input 0, holding its
// lock; FailedPrecondition naming it when it has no value yet.
template <typename Fn>
void WithInitializedVariable(OpKernelContext* ctx, Fn&& update) {
  auto var = LookupVariable(ctx, ctx->input(0));
  TW_OP_REQUIRES_OK(ctx, var.status());
  absl::MutexLock lock((*var)->mu());
  TW_OP_REQUIRES(
      ctx, (*var)->initialized(),
      errors::FailedPrecondition("Attempting to use uninitialized value ", (*var)->name()));
  update(**var, &(*var)->value());
}

// ---- Assign ----
TW_REGISTER_OP("Assign")
    .Input("resource: resource")
    .Input("value: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("use_locking: bool = true")
    .Attr("validate_shape: bool = true")
    .SetIsStateful()
    .Doc("Sets the variable to a copy of value; outputs the new value.");

class AssignOp : public OpKernel {
 public:
  explicit AssignOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("validate_shape", &validate_shape_));
  }
  void Compute(OpKernelContext* ctx) override {
    auto var = LookupVariable(ctx, ctx->input(0));
    TW_OP_REQUIRES_OK(ctx, var.status());
    const Tensor& value = ctx->input(1);
    TW_OP_REQUIRES_OK(ctx, CheckValue(**var, value, validate_shape_));
    // A value nobody else holds (computed in this step, or received) is kept without a
    // copy; one held elsewhere (a Const kernel's value, a client's feed, which the client
    // may refill in place) is copied, since only the variable's own updates copy on write.
    const Tensor kept = value.BufferIsShared() ? value.Copy() : value;
    {
      absl::MutexLock lock((*var)->mu());
      (*var)->set_value(kept);
    }
    ctx->set_output(0, kept);
  }

 private:
  bool validate_shape_ = true;
};
TW_REGISTER_KERNEL("Assign", "CPU", AssignOp);

// ---- AssignAdd / AssignSub ----
template <bool kAdd>
class AssignUpdateOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& delta = ctx->input(1);
    WithInitializedVariable(ctx, [&](VariableResource& var, const Tensor*) {
      TW_OP_REQUIRES_OK(ctx, CheckValue(var, delta, /*validate_shape=*/false));
      Tensor* value = var.mutable_value();
      TW_OP_REQUIRES(
          ctx, value->shape() == delta.shape(),
          errors::InvalidArgument(kAdd ? "AssignAdd" : "AssignSub", " of variable ", var.name(),
                                  ": value has shape ", value->shape().DebugString(),
                                  ", update has shape ", delta.shape().DebugString()));
      const bool numeric =
          Dispatch(TypeList<float, double, int32_t, int64_t, uint8_t>{}, value->dtype(),
                   [&](auto tag) { Update<typename decltype(tag)::type>(value, delta); });
      TW_OP_REQUIRES(ctx, numeric, UnsupportedType(*this, value->dtype()));
      // The new value, as a snapshot (shared until the variable's next update copies it);
      // skipped when nothing reads it, so that the next update need not copy.
      if (ctx->output_required(0)) ctx->set_output(0, var.Snapshot());
    });
  }

 private:
  // Vectorized through Eigen (a plain loop is not: the compiler cannot rule out that the
  // two buffers overlap). Integers are updated as their unsigned type, which wraps.
  template <typename T>
  static void Update(Tensor* value, const Tensor& delta) {
    using E = typename std::conditional_t<std::is_integral_v<T>, std::make_unsigned<T>,
                                          std::type_identity<T>>::type;
    const Eigen::Index n = value->num_elements();
    MutArray<E> v(reinterpret_cast<E*>(value->flat<T>().data()), n);
    ConstArray<E> d(reinterpret_cast<const E*>(delta.flat<T>().data()), n);
    if constexpr (kAdd) {
      v += d;
    } else {
      v -= d;
    }
  }
};

TW_REGISTER_OP("AssignAdd")
    .Input("resource: resource")
    .Input("value: T")
    .Output("output: T")
    .Attr("T: {float, double, int32, int64, uint8}")
    .Attr("use_locking: bool = false")
    .SetIsStateful()
    .Doc("Adds value to the variable in place; outputs the new value.");
TW_REGISTER_KERNEL("AssignAdd", "CPU", AssignUpdateOp<true>);

TW_REGISTER_OP("AssignSub")
    .Input("resource: resource")
    .Input("value: T")
    .Output("output: T")
    .Attr("T: {float, double, int32, int64, uint8}")
    .Attr("use_locking: bool = false")
    .SetIsStateful()
    .Doc("Subtracts value from the variable in place; outputs the new value.");
TW_REGISTER_KERNEL("AssignSub", "CPU", AssignUpdateOp<false>);

// ---- CountUpTo ----
TW_REGISTER_OP("CountUpTo")
    .Input("resource: resource")
    .Output("output: T")
    .Attr("limit: int")
    .Attr("T: {int32, int64}")
    .SetIsStateful()
    .Doc(
        "Adds 1 to the scalar variable unless it has reached limit (OutOfRange); outputs its "
        "value before.");

// The epoch counters of TF 1.x's input producers (limit_epochs) count with it.
class CountUpToOp : public OpKernel {
 public:
  explicit CountUpToOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("limit", &limit_));
  }
  void Compute(OpKernelContext* ctx) override {
    WithInitializedVariable(ctx, [&](VariableResource& var, const Tensor*) {
      TW_OP_REQUIRES(ctx, var.dtype() == output_type(0),
                     errors::InvalidArgument("CountUpTo of variable ", var.name(), ": it is ",
                                             DataTypeName(var.dtype()), ", the op counts ",
                                             DataTypeName(output_type(0))));
      Tensor* value = var.mutable_value();
      TW_OP_REQUIRES(ctx, value->rank() == 0,
                     errors::InvalidArgument("Scalar expected for ref but got ",
                                             value->shape().DebugString()));
      const int64_t before =
          value->dtype() == DT_INT32 ? value->flat<int32_t>()[0] : value->flat<int64_t>()[0];
      TW_OP_REQUIRES(ctx, before < limit_, errors::OutOfRange("Reached limit of ", limit_));
      if (value->dtype() == DT_INT32) {
        value->flat<int32_t>()[0] = static_cast<int32_t>(before + 1);
        ctx->set_output(0, Tensor::Scalar(static_cast<int32_t>(before)));
      } else {
        value->flat<int64_t>()[0] = before + 1;
        ctx->set_output(0, Tensor::Scalar(before));
      }
    });
  }

 private:
  int64_t limit_ = 0;
};
TW_REGISTER_KERNEL("CountUpTo", "CPU", CountUpToOp);

// ---- ReadVariable ----
TW_REGISTER_OP("ReadVariable")
    .Input("resource: resource")
    .Output("value: dtype")
    .Attr("dtype: type")
    .SetIsStateful()
    .Doc("A snapshot of the variable's value.");

class ReadVariableOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    // Shares the variable's buffer; later updates copy it first (copy on write).
    WithInitializedVariable(
        ctx, [ctx](VariableResource& var, const Tensor*) { ctx->set_output(0, var.Snapshot()); });
  }
};
TW_REGISTER_KERNEL("ReadVariable", "CPU", ReadVariableOp);

// ---- IsVariableInitialized ----
TW_REGISTER_OP("IsVariableInitialized")
    .Input("resource: resource")
    .Output("is_initialized: bool")
    .SetIsStateful()
    .Doc("Whether the variable has been assigned a value.");

class IsVariableInitializedOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    auto var = LookupVariable(ctx, ctx->input(0));
    bool initialized = false;
    if (var.ok()) {
      absl::MutexLock lock((*var)->mu());
      initialized = (*var)->initialized();
    }
    ctx->set_output(0, Tensor::Scalar(initialized));
  }
};
TW_REGISTER_KERNEL("IsVariableInitialized", "CPU", IsVariableInitializedOp);

// ---- ScatterAdd / ScatterSub / ScatterMul / ScatterDiv / ScatterMax / ScatterMin /
// ScatterUpdate ----
enum class ScatterKind { kUpdate, kAdd, kSub, kMul, kDiv, kMax, kMin };

template <typename T>
std::make_unsigned_t<T> Unsigned(T v) {
  return static_cast<std::make_unsigned_t<T>>(v);
}

// dst combined with the update u; integers wrap as the element-wise ops do.
template <ScatterKind kKind, typename T>
T Combine(T dst, T u) {
  if constexpr (kKind == ScatterKind::kUpdate) {
    return u;
  } else if constexpr (kKind == ScatterKind::kAdd) {
    return WrapAdd(dst, u);
  } else if constexpr (kKind == ScatterKind::kSub) {
    if constexpr (std::is_integral_v<T>) return static_cast<T>(Unsigned(dst) - Unsigned(u));
    return dst - u;
  } else if constexpr (kKind == ScatterKind::kMul) {
    if constexpr (std::is_integral_v<T>) return static_cast<T>(Unsigned(dst) * Unsigned(u));
    return dst * u;
  } else if constexpr (kKind == ScatterKind::kDiv) {
    // Checked before: no integer zero divisor; lowest / -1 wraps instead of trapping.
    if constexpr (std::is_integral_v<T>) {
      if (u == -1) return static_cast<T>(Unsigned(T(0)) - Unsigned(dst));
    }
    return dst / u;
  } else if constexpr (kKind == ScatterKind::kMax) {
    return std::max(dst, u);
  } else {
    return std::min(dst, u);
  }
}

template <ScatterKind kKind>
class ScatterOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& indices = ctx->input(1);
    const Tensor& updates = ctx->input(2);
    if constexpr (kKind == ScatterKind::kDiv) {
      const bool zero = Dispatch(TypeList<int32_t, int64_t>{}, updates.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        auto u = updates.flat<T>();
        TW_OP_REQUIRES(ctx, std::find(u.begin(), u.end(), T(0)) == u.end(),
                       errors::InvalidArgument("node ", name(), ": ScatterDiv by an integer zero"));
      });
      if (zero && !ctx->status().ok()) return;
    }
    WithInitializedVariable(ctx, [&](VariableResource& var, const Tensor*) {
      Tensor* value = var.mutable_value();
      TW_OP_REQUIRES(ctx, value->rank() >= 1 && updates.dtype() == value->dtype(),
                     errors::InvalidArgument("scatter into variable ", var.name(), " of shape ",
                                             value->shape().DebugString(), " with ",
                                             DataTypeName(updates.dtype()), " updates"));
      const int64_t rows = value->dim(0);
      const int64_t row_size = rows == 0 ? 0 : value->num_elements() / rows;
      const int64_t n = indices.num_elements();
      TW_OP_REQUIRES(ctx, updates.num_elements() == n * row_size,
                     errors::InvalidArgument("updates of shape ", updates.shape().DebugString(),
                                             " do not match ", n, " indices into rows of ",
                                             row_size, " elements"));
      std::vector<int64_t> idx(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        idx[i] =
            indices.dtype() == DT_INT32 ? indices.flat<int32_t>()[i] : indices.flat<int64_t>()[i];
        TW_OP_REQUIRES(ctx, idx[i] >= 0 && idx[i] < rows,
                       errors::InvalidArgument("indices[", i, "] = ", idx[i], " is not in [0, ",
                                               rows, ") for variable ", var.name()));
      }
      const bool numeric = Dispatch(NumericTypes{}, value->dtype(), [&](auto tag) {
        Apply<typename decltype(tag)::type>(value, updates, idx, row_size);
      });
      TW_OP_REQUIRES(ctx, numeric, UnsupportedType(*this, value->dtype()));
      // The new value, as a snapshot (shared until the variable's next update copies it);
      // skipped when nothing reads it, so that the next update need not copy.
      if (ctx->output_required(0)) ctx->set_output(0, var.Snapshot());
    });
  }

 private:
  template <typename T>
  static void Apply(Tensor* value, const Tensor& updates, const std::vector<int64_t>& idx,
                    int64_t row_size) {
    auto v = value->flat<T>();
    auto u = updates.flat<T>();
    for (size_t i = 0; i < idx.size(); ++i) {
      for (int64_t k = 0; k < row_size; ++k) {
        T& dst = v[idx[i] * row_size + k];
        dst = Combine<kKind, T>(dst, u[i * row_size + k]);
      }
    }
  }
};

// One definition per kind: the variable's rows at indices become f(row, update), in order
// of the indices (a repeated index applies each update). Updates of one variable are always
// serialized, so use_locking is kept only for TF graphs (its default as TF's).
#define TW_SCATTER_OP(NAME, KIND, LOCKING, DOC) \
  TW_REGISTER_OP(NAME)                          \
      .Input("resource: resource")              \
      .Input("indices: Tindices")               \
      .Input("updates: T")                      \
      .Output("output: T")                      \
      .Attr("T: {float, double, int32, int64}") \
      .Attr("Tindices: {int32, int64}")         \
      .Attr("use_locking: bool = " LOCKING)     \
      .SetIsStateful()                          \
      .Doc(DOC);                                \
  TW_REGISTER_KERNEL(NAME, "CPU", ScatterOp<ScatterKind::KIND>)

TW_SCATTER_OP("ScatterAdd", kAdd, "false", "Adds updates to the variable's rows at indices.");
TW_SCATTER_OP("ScatterSub", kSub, "false",
              "Subtracts updates from the variable's rows at indices.");
TW_SCATTER_OP("ScatterMul", kMul, "false", "Multiplies the variable's rows at indices by updates.");
TW_SCATTER_OP("ScatterDiv", kDiv, "false",
              "Divides the variable's rows at indices by updates (an integer zero is an error).");
TW_SCATTER_OP("ScatterMax", kMax, "false",
              "The variable's rows at indices become max(row, update).");
TW_SCATTER_OP("ScatterMin", kMin, "false",
              "The variable's rows at indices become min(row, update).");
TW_SCATTER_OP("ScatterUpdate", kUpdate, "true",
              "Writes updates into the variable's rows at indices.");
#undef TW_SCATTER_OP

// ---- ResourceGather ----
TW_REGISTER_OP("ResourceGather")
    .Input("resource: resource")
    .Input("indices: Tindices")
    .Output("output: dtype")
    .Attr("dtype: type")
    .Attr("Tindices: {int32, int64}")
    .SetIsStateful()
    .Doc(
        "Rows of the variable (along dimension 0) picked by indices, read where the variable "
        "lives: output shape indices.shape + variable.shape[1:].");

class ResourceGatherOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& indices = ctx->input(1);
    WithInitializedVariable(ctx, [&](VariableResource& var, const Tensor* value) {
      TW_OP_REQUIRES(ctx, value->dtype() == output_type(0),
                     errors::InvalidArgument("node ", name(), ": variable ", var.name(), " is ",
                                             DataTypeName(value->dtype()), ", not ",
                                             DataTypeName(output_type(0))));
      TW_OP_REQUIRES(
          ctx, value->rank() >= 1,
          errors::InvalidArgument("node ", name(), ": ResourceGather from variable ", var.name(),
                                  " of shape ", value->shape().DebugString(), " (needs rows)"));
      const int64_t rows = value->dim(0);
      const int64_t n = indices.num_elements();
      std::vector<int64_t> idx(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        idx[i] =
            indices.dtype() == DT_INT32 ? indices.flat<int32_t>()[i] : indices.flat<int64_t>()[i];
        TW_OP_REQUIRES(
            ctx, idx[i] >= 0 && idx[i] < rows,
            errors::InvalidArgument("node ", name(), ": indices[", i, "] = ", idx[i],
                                    " is not in [0, ", rows, ") for variable ", var.name()));
      }
      std::vector<int64_t> dims = indices.shape().dims();
      dims.insert(dims.end(), value->shape().dims().begin() + 1, value->shape().dims().end());
      auto shape = TensorShape::Create(dims);
      TW_OP_REQUIRES_OK(ctx, shape.status());
      Tensor* out = nullptr;
      TW_OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
      const int64_t row = rows == 0 ? 0 : value->num_elements() / rows;
      if (row == 0) return;
      // Copies the rows under the variable's lock: later updates change it in place.
      DispatchType(value->dtype(), [&]<typename T>() {
        auto src = value->flat<T>();
        auto it = out->flat<T>().begin();
        for (int64_t k : idx) it = std::copy_n(src.begin() + k * row, row, it);
      });
    });
  }
};
TW_REGISTER_KERNEL("ResourceGather", "CPU", ResourceGatherOp);

// ---- VariableShape ----
TW_REGISTER_OP("VariableShape")
    .Input("resource: resource")
    .Output("output: out_type")
    .Attr("out_type: {int32, int64} = int32")
    .SetIsStateful()
    .Doc("The shape of the variable's current value, as a vector.");

class VariableShapeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    WithInitializedVariable(ctx, [&](VariableResource&, const Tensor* value) {
      const std::vector<int64_t>& dims = value->shape().dims();
      Tensor* out = nullptr;
      TW_OP_REQUIRES_OK(
          ctx, ctx->allocate_output(0, TensorShape({static_cast<int64_t>(dims.size())}), &out));
      if (output_type(0) == DT_INT64) {
        std::copy(dims.begin(), dims.end(), out->flat<int64_t>().begin());
        return;
      }
      for (size_t d = 0; d < dims.size(); ++d) {
        TW_OP_REQUIRES(ctx, dims[d] <= std::numeric_limits<int32_t>::max(),
                       errors::InvalidArgument("node ", name(), ": dimension ", d,
                                               " does not fit int32; use out_type int64"));
        out->flat<int32_t>()[d] = static_cast<int32_t>(dims[d]);
      }
    });
  }
};
TW_REGISTER_KERNEL("VariableShape", "CPU", VariableShapeOp);

// ---- Gradients ----
// The gradient with respect to a variable flows to its handle; tw::Gradients sums what
// reaches a handle from every ReadVariable and ResourceGather of it.

Status ReadVariableGradient(const Scope&, const ForwardOp&,
                            const std::vector<Gradient>& grad_outputs,
                            std::vector<Gradient>* grad_inputs) {
  (*grad_inputs)[0] = grad_outputs[0];  // sparse stays sparse (a Gather of the value)
  return OkStatus();
}
TW_REGISTER_SPARSE_GRADIENT("ReadVariable", ReadVariableGradient);

Status ResourceGatherGradient(const Scope& scope, const ForwardOp& op,
                              const std::vector<Gradient>& grad_outputs,
                              std::vector<Gradient>* grad_inputs) {
  const Output dense_shape =
      scope.AddNodeOutput("VariableShape", {{op.input(0)}}, {{"out_type", MakeAttr(DT_INT64)}});
  (*grad_inputs)[0].sparse =
      GatherGradientSlices(scope, grad_outputs[0].dense, op.input(1), dense_shape);
  return OkStatus();
}
TW_REGISTER_GRADIENT("ResourceGather", ResourceGatherGradient);

TW_NO_GRADIENT("Variable");
TW_NO_GRADIENT("VariableShape");
TW_NO_GRADIENT("IsVariableInitialized");
TW_NO_GRADIENT("Assign");
TW_NO_GRADIENT("AssignAdd");
TW_NO_GRADIENT("CountUpTo");
TW_NO_GRADIENT("AssignSub");
TW_NO_GRADIENT("ScatterAdd");
TW_NO_GRADIENT("ScatterUpdate");
TW_NO_GRADIENT("ScatterSub");
TW_NO_GRADIENT("ScatterMul");
TW_NO_GRADIENT("ScatterDiv");
TW_NO_GRADIENT("ScatterMax");
TW_NO_GRADIENT("ScatterMin");

}  // namespace

namespace ops {

Variable MakeVariable(const Scope& scope, std::string_view name, DataType dtype,
                      std::vector<int64_t> shape, const VariableOptions& options) {
  Variable v;
  v.dtype = dtype;
  v.shape = shape;
  v.handle =
      scope.WithOpName(name).AddNodeOutput("Variable", {},
                                           {{"dtype", MakeAttr(dtype)},
                                            {"shape", MakeAttr(PartialShape::Of(std::move(shape)))},
                                            {"container", MakeAttr(options.container)},
                                            {"shared_name", MakeAttr(options.shared_name)}});
  return v;
}

namespace {
AttrMap LockingAttrs(const AssignOptions& o) { return {{"use_locking", MakeAttr(o.use_locking)}}; }
}  // namespace

Output Assign(const Scope& scope, const Variable& var, Input value, const AssignOptions& o) {
  AttrMap attrs = LockingAttrs(o);
  attrs["validate_shape"] = MakeAttr(o.validate_shape);
  return scope.AddNodeOutput("Assign", {{var.handle}, {value}}, attrs);
}
Output AssignAdd(const Scope& scope, const Variable& var, Input value, const AssignOptions& o) {
  return scope.AddNodeOutput("AssignAdd", {{var.handle}, {value}}, LockingAttrs(o));
}
Output AssignSub(const Scope& scope, const Variable& var, Input value, const AssignOptions& o) {
  return scope.AddNodeOutput("AssignSub", {{var.handle}, {value}}, LockingAttrs(o));
}
Output ReadVariable(const Scope& scope, const Variable& var) {
  return scope.AddNodeOutput("ReadVariable", {{var.handle}}, {{"dtype", MakeAttr(var.dtype)}});
}
Output ResourceGather(const Scope& scope, const Variable& var, Input indices) {
  return scope.AddNodeOutput("ResourceGather", {{var.handle}, {indices}},
                             {{"dtype", MakeAttr(var.dtype)}});
}
Output VariableShape(const Scope& scope, const Variable& var, DataType out_type) {
  return scope.AddNodeOutput("VariableShape", {{var.handle}}, {{"out_type", MakeAttr(out_type)}});
}
Output IsVariableInitialized(const Scope& scope, const Variable& var) {
  return scope.AddNodeOutput("IsVariableInitialized", {{var.handle}});
}
Output ScatterAdd(const Scope& scope, const Variable& var, Input indices, Input updates) {
  return scope.AddNodeOutput("ScatterAdd", {{var.handle}, {indices}, {updates}});
}
Output ScatterUpdate(const Scope& scope, const Variable& var, Input indices, Input updates) {
  return scope.AddNodeOutput("ScatterUpdate", {{var.handle}, {indices}, {updates}});
}
Output ScatterSub(const Scope& scope, const Variable& var, Input indices, Input updates) {
  return scope.AddNodeOutput("ScatterSub", {{var.handle}, {indices}, {updates}});
}
Output ScatterMul(const Scope& scope, const Variable& var, Input indices, Input updates) {
  return scope.AddNodeOutput("ScatterMul", {{var.handle}, {indices}, {updates}});
}
Output ScatterDiv(const Scope& scope, const Variable& var, Input indices, Input updates) {
  return scope.AddNodeOutput("ScatterDiv", {{var.handle}, {indices}, {updates}});
}
Output ScatterMax(const Scope& scope, const Variable& var, Input indices, Input updates) {
  return scope.AddNodeOutput("ScatterMax", {{var.handle}, {indices}, {updates}});
}
Output ScatterMin(const Scope& scope, const Variable& var, Input indices, Input updates) {
  return scope.AddNodeOutput("ScatterMin", {{var.handle}, {indices}, {updates}});
}
Operation Group(const Scope& scope, const std::vector<Operation>& ops) {
  return scope.WithControlDependencies(ops).AddNode("NoOp", {});
}

}  // namespace ops
}  // namespace tw
