// Test helper: runs one kernel on given inputs, without a graph or an executor.
//
//   KernelTest t;
//   auto out = t.Run(NodeBuilder("add", "Add").Attr("T", DT_FLOAT), {x, y});
//   ASSERT_TRUE(out.ok());  EXPECT_EQ((*out)[0], expected);
#ifndef TENSORWEAVE_TESTING_KERNEL_TEST_FIXTURE_H_
#define TENSORWEAVE_TESTING_KERNEL_TEST_FIXTURE_H_

#include <memory>
#include <string>
#include <vector>

#include "src/framework/op_kernel.h"
#include "src/runtime/cpu_device.h"

namespace tw::testing {

// Builds a NodeDef for a kernel test.
class NodeBuilder {
 public:
  NodeBuilder(std::string name, std::string op);
  template <typename T>
  NodeBuilder& Attr(const std::string& name, const T& value) {
    (*node_.mutable_attr())[name] = MakeAttr(value);
    return *this;
  }
  NodeBuilder& NumInputs(int n);  // adds placeholder input names "in:0".."in:n-1"
  const proto::NodeDef& node() const { return node_; }

 private:
  proto::NodeDef node_;
};

// Owns a CPU device (/job:localhost/replica:0/task:0/device:CPU:0, 2 threads) shared by
// every kernel it runs, so resources persist across Run calls of one fixture.
class KernelTest {
 public:
  KernelTest();
  // Creates the kernel and runs it once (waiting for async kernels). Returns the outputs or
  // the kernel's error.
  StatusOr<std::vector<Tensor>> Run(const NodeBuilder& node, const std::vector<Tensor>& inputs,
                                    CancellationManager* cancellation = nullptr);
  CpuDevice* device() { return device_.get(); }

 private:
  std::unique_ptr<CpuDevice> device_;
};

// Runs `op` on `inputs` in a fresh KernelTest, as node "node_<op>" with `type_attr` (when
// not empty) set to the first input's dtype: its first output, or the kernel's error.
// For element-wise kernels and others with one output.
StatusOr<Tensor> RunFirstOutput(const std::string& op, const std::vector<Tensor>& inputs,
                                const std::string& type_attr = "T");

}  // namespace tw::testing

#endif  // TENSORWEAVE_TESTING_KERNEL_TEST_FIXTURE_H_
