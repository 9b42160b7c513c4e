#include "testing/kernel_test_fixture.h"

#include <cstdlib>

namespace tw::testing {

NodeBuilder::NodeBuilder(std::string name, std::string op) {
  node_.set_name(std::move(name));
  node_.set_op(std::move(op));
}

NodeBuilder& NodeBuilder::NumInputs(int n) {
  for (int i = 0; i < n; ++i) node_.add_input("in:" + std::to_string(i));
  return *this;
}

KernelTest::KernelTest() {
  auto device =
      CpuDevice::Create(DeviceName::Full("localhost", 0, 0, "CPU", 0), {.num_threads = 2});
  if (!device.ok()) std::abort();
  device_ = *std::move(device);
}

StatusOr<std::vector<Tensor>> KernelTest::Run(const NodeBuilder& node,
                                              const std::vector<Tensor>& inputs,
                                              CancellationManager* cancellation) {
  TW_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> kernel,
                      KernelRegistry::Global().CreateKernel(node.node(), device_.get()));
  if (kernel->num_inputs() != static_cast<int>(inputs.size())) {
    return errors::InvalidArgument("kernel ", node.node().op(), " takes ", kernel->num_inputs(),
                                   " inputs, test gave ", inputs.size());
  }
  for (int i = 0; i < kernel->num_inputs(); ++i) {
    if (kernel->input_type(i) != inputs[i].dtype()) {
      return errors::InvalidArgument("input ", i, " of ", node.node().op(), " must be ",
                                     DataTypeName(kernel->input_type(i)), ", test gave ",
                                     DataTypeName(inputs[i].dtype()));
    }
  }
  CancellationManager default_cancellation;
  OpKernelContext::Params params;
  params.device = device_.get();
  params.kernel = kernel.get();
  params.inputs = &inputs;
  params.cancellation_manager = cancellation != nullptr ? cancellation : &default_cancellation;
  OpKernelContext ctx(params);
  kernel->Compute(&ctx);  // waits for async kernels
  if (!ctx.ok()) return ctx.status();
  return *ctx.outputs();
}

StatusOr<Tensor> RunFirstOutput(const std::string& op, const std::vector<Tensor>& inputs,
                                const std::string& type_attr) {
  NodeBuilder node("node_" + op, op);
  if (!type_attr.empty() && !inputs.empty()) node.Attr(type_attr, inputs[0].dtype());
  node.NumInputs(static_cast<int>(inputs.size()));
  KernelTest t;
  auto out = t.Run(node, inputs);
  if (!out.ok()) return out.status();
  return (*out)[0];
}

}  // namespace tw::testing
