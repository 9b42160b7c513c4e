#include "src/framework/op_kernel.h"

#include "absl/synchronization/notification.h"

namespace tw {

OpKernel::OpKernel(OpKernelConstruction* c)
    : def_(c->def()), input_types_(c->input_types()), output_types_(c->output_types()) {}

void AsyncOpKernel::Compute(OpKernelContext* ctx) {
  absl::Notification done;
  ComputeAsync(ctx, [&done] { done.Notify(); });
  done.WaitForNotification();
}

OpKernelContext::OpKernelContext(const Params& params)
    : params_(params), outputs_(static_cast<size_t>(params.kernel->num_outputs())) {}

Status OpKernelContext::allocate_output(int i, const TensorShape& shape, Tensor** out) {
  auto t = Tensor::Allocate(params_.kernel->output_type(i), shape);
  if (!t.ok()) {
    Status s = errors::Annotate(t.status(), "node " + params_.kernel->name() + ": ");
    SetStatus(s);
    return s;
  }
  outputs_[i] = *std::move(t);
  *out = &outputs_[i];
  return OkStatus();
}

void OpKernelContext::set_output(int i, Tensor t) {
  if (t.dtype() != params_.kernel->output_type(i)) {
    SetStatus(errors::InvalidArgument("node ", params_.kernel->name(), " output ", i, " is ",
                                      DataTypeName(t.dtype()), ", declared ",
                                      DataTypeName(params_.kernel->output_type(i))));
    return;
  }
  outputs_[i] = std::move(t);
}

KernelRegistry& KernelRegistry::Global() {
  static auto* registry = new KernelRegistry();
  return *registry;
}

void KernelRegistry::Register(const std::string& op, const std::string& device_type,
                              Factory factory) {
  absl::MutexLock lock(&mu_);
  factories_[{op, device_type}] = std::move(factory);
}

bool KernelRegistry::HasKernel(std::string_view op, std::string_view device_type) const {
  absl::MutexLock lock(&mu_);
  return factories_.count({std::string(op), std::string(device_type)}) > 0;
}

StatusOr<std::unique_ptr<OpKernel>> KernelRegistry::CreateKernel(const proto::NodeDef& node,
                                                                 DeviceBase* device) const {
  TW_ASSIGN_OR_RETURN(const OpDef* op_def, OpRegistry::Global().LookUp(node.op()));
  Factory factory;
  {
    absl::MutexLock lock(&mu_);
    auto it = factories_.find({node.op(), device->device_type()});
    if (it == factories_.end()) {
      return errors::NotFound("no ", device->device_type(), " kernel for op ", node.op(), " (node ",
                              node.name(), ")");
    }
    factory = it->second;
  }
  proto::NodeDef filled = node;
  TW_RETURN_IF_ERROR(AddDefaultsAndValidateAttrs(*op_def, &filled));
  std::vector<DataType> inputs, outputs;
  TW_RETURN_IF_ERROR(ArgTypesForNode(*op_def, filled, /*outputs=*/false, &inputs));
  TW_RETURN_IF_ERROR(ArgTypesForNode(*op_def, filled, /*outputs=*/true, &outputs));
  OpKernelConstruction construction(&filled, op_def, device, inputs, outputs);
  std::unique_ptr<OpKernel> kernel = factory(&construction);
  if (!construction.status().ok()) {
    return errors::Annotate(construction.status(), "node " + node.name() + ": ");
  }
  return kernel;
}

}  // namespace tw
