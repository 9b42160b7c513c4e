// Every registered op has a CPU kernel: an op without one could be built into a graph but
// never run.
#include "gtest/gtest.h"
#include "src/framework/op_kernel.h"

namespace tw {
namespace {

TEST(RegistrySelfTest, EveryOpHasACpuKernel) {
  const std::vector<std::string> ops = OpRegistry::Global().ListOps();
  EXPECT_GE(ops.size(), 4u);
  for (const std::string& op : ops) {
    EXPECT_TRUE(KernelRegistry::Global().HasKernel(op, "CPU"))
        << "op " << op << " has no CPU kernel";
  }
}

}  // namespace
}  // namespace tw
