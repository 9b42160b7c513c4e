// OpKernel: the code that runs one node; OpKernelContext: what it sees of a step; the
// kernel registry, keyed by op and device type.
//
// A kernel is created once per node of an executable graph and then run for every step,
// possibly from several threads at once: Compute() must be thread-safe, and per-step state
// belongs in the context, not in the kernel. Kernels that wait (queue operations, Recv)
// derive from AsyncOpKernel and call `done` when finished instead of blocking a thread.
#ifndef TENSORWEAVE_SRC_FRAMEWORK_OP_KERNEL_H_
#define TENSORWEAVE_SRC_FRAMEWORK_OP_KERNEL_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "src/framework/attr_value.h"
#include "src/framework/cancellation.h"
#include "src/framework/device_base.h"
#include "src/framework/op_def.h"
#include "tensorweave/tensor.h"

namespace tw {

class AsyncOpKernel;
class Rendezvous;

// Feeds and fetches of one step, read by the _Arg and _Retval kernels. Thread-safe for
// distinct indices.
class CallFrame {
 public:
  CallFrame(std::vector<Tensor> args, size_t num_retvals)
      : args_(std::move(args)), retvals_(num_retvals) {}
  const std::vector<Tensor>& args() const { return args_; }
  std::vector<Tensor>& retvals() { return retvals_; }

 private:
  std::vector<Tensor> args_;
  std::vector<Tensor> retvals_;
};

// Given to a kernel's constructor: the node, its types and the device.
class OpKernelConstruction {
 public:
  OpKernelConstruction(const proto::NodeDef* node, const OpDef* op_def, DeviceBase* device,
                       std::vector<DataType> input_types, std::vector<DataType> output_types)
      : node_(node),
        op_def_(op_def),
        device_(device),
        input_types_(std::move(input_types)),
        output_types_(std::move(output_types)) {}

  const proto::NodeDef& def() const { return *node_; }
  const OpDef& op_def() const { return *op_def_; }
  DeviceBase* device() const { return device_; }
  template <typename T>
  Status GetAttr(std::string_view name, T* value) const {
    return GetNodeAttr(*node_, name, value);
  }
  int num_inputs() const { return static_cast<int>(input_types_.size()); }
  int num_outputs() const { return static_cast<int>(output_types_.size()); }
  DataType input_type(int i) const { return input_types_[i]; }
  DataType output_type(int i) const { return output_types_[i]; }
  const std::vector<DataType>& input_types() const { return input_types_; }
  const std::vector<DataType>& output_types() const { return output_types_; }

  void SetStatus(const Status& s) {
    if (status_.ok()) status_ = s;
  }
  const Status& status() const { return status_; }

 private:
  const proto::NodeDef* node_;
  const OpDef* op_def_;
  DeviceBase* device_;
  std::vector<DataType> input_types_;
  std::vector<DataType> output_types_;
  Status status_;
};

class OpKernel {
 public:
  explicit OpKernel(OpKernelConstruction* c);
  virtual ~OpKernel() = default;
  OpKernel(const OpKernel&) = delete;
  OpKernel& operator=(const OpKernel&) = delete;

  // Runs the node for one step; reports errors through ctx->SetStatus().
  virtual void Compute(class OpKernelContext* ctx) = 0;
  virtual AsyncOpKernel* AsAsync() { return nullptr; }
  // True for kernels worth a thread of their own (MatMul); cheap ones run inline.
  virtual bool IsExpensive() const { return false; }

  const std::string& name() const { return def_.name(); }
  const std::string& type_string() const { return def_.op(); }
  const proto::NodeDef& def() const { return def_; }
  int num_inputs() const { return static_cast<int>(input_types_.size()); }
  int num_outputs() const { return static_cast<int>(output_types_.size()); }
  DataType input_type(int i) const { return input_types_[i]; }
  DataType output_type(int i) const { return output_types_[i]; }

 private:
  const proto::NodeDef def_;
  const std::vector<DataType> input_types_;
  const std::vector<DataType> output_types_;
};

class AsyncOpKernel : public OpKernel {
 public:
  using DoneCallback = std::function<void()>;
  using OpKernel::OpKernel;

  // Must eventually call `done` exactly once, on any thread, after setting the outputs or
  // the status. Must not block: wait by registering a callback.
  virtual void ComputeAsync(OpKernelContext* ctx, DoneCallback done) = 0;

  AsyncOpKernel* AsAsync() final { return this; }
  void Compute(OpKernelContext* ctx) final;  // ComputeAsync, waiting for done
};

// What a kernel sees of one step: its inputs, its outputs, and the step's services.
// Not thread-safe; owned by the executor for one kernel invocation.
class OpKernelContext {
 public:
  struct Params {
    int64_t step_id = 0;
    DeviceBase* device = nullptr;
    OpKernel* kernel = nullptr;
    const std::vector<Tensor>* inputs = nullptr;
    CancellationManager* cancellation_manager = nullptr;
    Rendezvous* rendezvous = nullptr;
    CallFrame* call_frame = nullptr;
    absl::Time deadline = absl::InfiniteFuture();
    // Names the session running the step; resources private to a session (queues without
    // a shared_name) are keyed by it.
    std::string_view session_handle;
    // The step's file policy when it has its own (a step of a session in the task's own
    // process may touch any file); null: the device's.
    const FileAccessPolicy* file_access = nullptr;
    // Per output: whether anything in the graph consumes it (null: all are).
    const std::vector<bool>* outputs_used = nullptr;
  };

  explicit OpKernelContext(const Params& params);

  const Params& params() const { return params_; }
  int64_t step_id() const { return params_.step_id; }
  DeviceBase* device() const { return params_.device; }
  // Where this step's kernels may read and write files (src/framework/file_access.h): the
  // step's own policy when it has one, else its device's.
  const FileAccessPolicy& file_access() const {
    return params_.file_access != nullptr ? *params_.file_access : params_.device->file_access();
  }
  ResourceMgr* resource_manager() const { return params_.device->resource_manager(); }
  CancellationManager* cancellation_manager() const { return params_.cancellation_manager; }
  Rendezvous* rendezvous() const { return params_.rendezvous; }
  CallFrame* call_frame() const { return params_.call_frame; }
  absl::Time deadline() const { return params_.deadline; }
  std::string_view session_handle() const { return params_.session_handle; }
  // False when no node of the graph reads output `i`: a kernel may then skip producing it
  // (AssignAdd does not copy the variable for nobody).
  bool output_required(int i) const {
    return params_.outputs_used == nullptr || (*params_.outputs_used)[i];
  }
  const OpKernel& op_kernel() const { return *params_.kernel; }

  int num_inputs() const { return static_cast<int>(params_.inputs->size()); }
  const Tensor& input(int i) const { return (*params_.inputs)[i]; }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }

  // Allocates output `i` with the kernel's declared output type; ResourceExhausted when
  // memory cannot be had (then the status is set too).
  Status allocate_output(int i, const TensorShape& shape, Tensor** out);
  // Sets output `i`; InvalidArgument (and the status) when the dtype is not the declared one.
  void set_output(int i, Tensor t);
  Tensor* mutable_output(int i) { return &outputs_[i]; }
  std::vector<Tensor>* outputs() { return &outputs_; }

  void SetStatus(const Status& s) {
    if (status_.ok()) status_ = s;
  }
  const Status& status() const { return status_; }
  bool ok() const { return status_.ok(); }

 private:
  Params params_;
  std::vector<Tensor> outputs_;
  Status status_;
};

// Stops the kernel with `status` when `cond` fails.
#define TW_OP_REQUIRES(ctx, cond, status) \
  do {                                    \
    if (!(cond)) {                        \
      (ctx)->SetStatus(status);           \
      return;                             \
    }                                     \
  } while (false)

#define TW_OP_REQUIRES_OK(ctx, expr)     \
  do {                                   \
    ::tw::Status tw_op_status_ = (expr); \
    if (!tw_op_status_.ok()) {           \
      (ctx)->SetStatus(tw_op_status_);   \
      return;                            \
    }                                    \
  } while (false)

#define TW_OP_REQUIRES_ASYNC(ctx, cond, status, done) \
  do {                                                \
    if (!(cond)) {                                    \
      (ctx)->SetStatus(status);                       \
      (done)();                                       \
      return;                                         \
    }                                                 \
  } while (false)

#define TW_OP_REQUIRES_OK_ASYNC(ctx, expr, done) \
  do {                                           \
    ::tw::Status tw_op_status_ = (expr);         \
    if (!tw_op_status_.ok()) {                   \
      (ctx)->SetStatus(tw_op_status_);           \
      (done)();                                  \
      return;                                    \
    }                                            \
  } while (false)

// Kernel factories by (op, device type). Thread-safe.
class KernelRegistry {
 public:
  using Factory = std::function<std::unique_ptr<OpKernel>(OpKernelConstruction*)>;

  static KernelRegistry& Global();

  void Register(const std::string& op, const std::string& device_type, Factory factory);
  bool HasKernel(std::string_view op, std::string_view device_type) const;

  // Validates `node` against its op (filling default attributes into a copy), computes its
  // types and constructs its kernel. NotFound when no kernel exists for the device type;
  // InvalidArgument naming the node for bad attributes or a failed construction.
  StatusOr<std::unique_ptr<OpKernel>> CreateKernel(const proto::NodeDef& node,
                                                   DeviceBase* device) const;

 private:
  mutable absl::Mutex mu_;
  std::map<std::pair<std::string, std::string>, Factory> factories_ ABSL_GUARDED_BY(mu_);
};

namespace internal {
struct KernelRegistrar {
  KernelRegistrar(const char* op, const char* device_type, KernelRegistry::Factory factory) {
    KernelRegistry::Global().Register(op, device_type, std::move(factory));
  }
};
}  // namespace internal

}  // namespace tw

// TW_REGISTER_KERNEL("MatMul", "CPU", MatMulOp);
#define TW_REGISTER_KERNEL(op, device_type, ...)                                                   \
  [[maybe_unused]] static const ::tw::internal::KernelRegistrar TW_OP_CONCAT(tw_kernel_registrar_, \
                                                                             __COUNTER__)(         \
      op, device_type, [](::tw::OpKernelConstruction* c) -> std::unique_ptr<::tw::OpKernel> {      \
        return std::make_unique<__VA_ARGS__>(c);                                                   \
      })

#endif  // TENSORWEAVE_SRC_FRAMEWORK_OP_KERNEL_H_
