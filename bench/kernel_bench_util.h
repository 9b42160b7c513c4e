// Running one CPU kernel in a benchmark as the executor runs it: made through the kernel
// registry for a one-thread device, with a fresh OpKernelContext (which allocates the
// outputs) each iteration. Any error ends the benchmark program with the message.
#ifndef TENSORWEAVE_BENCH_KERNEL_BENCH_UTIL_H_
#define TENSORWEAVE_BENCH_KERNEL_BENCH_UTIL_H_

#include <cstdlib>
#include <iostream>
#include <vector>

#include "benchmark/benchmark.h"
#include "src/framework/op_kernel.h"
#include "src/runtime/cpu_device.h"

namespace tw::bench {

[[noreturn]] inline void Die(const Status& s) {
  std::cerr << "benchmark setup failed: " << s << "\n";
  std::exit(1);
}

// Runs the kernel of `node` on `inputs` once per benchmark iteration.
inline void RunKernel(benchmark::State& state, const proto::NodeDef& node,
                      const std::vector<Tensor>& inputs) {
  auto device =
      CpuDevice::Create(DeviceName::Full("localhost", 0, 0, "CPU", 0), {.num_threads = 1});
  if (!device.ok()) Die(device.status());
  auto kernel = KernelRegistry::Global().CreateKernel(node, device->get());
  if (!kernel.ok()) Die(kernel.status());
  CancellationManager cancellation;
  OpKernelContext::Params params;
  params.device = device->get();
  params.kernel = kernel->get();
  params.inputs = &inputs;
  params.cancellation_manager = &cancellation;
  for (auto _ : state) {
    OpKernelContext ctx(params);
    (*kernel)->Compute(&ctx);
    if (!ctx.ok()) Die(ctx.status());
    benchmark::DoNotOptimize(ctx.mutable_output(0)->raw_data());
  }
}

}  // namespace tw::bench

#endif  // TENSORWEAVE_BENCH_KERNEL_BENCH_UTIL_H_
