// Executor: runs a Graph's kernels on one device in dataflow order.
//
// Kernels are created once and reused by every step. A step runs cheap kernels inline on
// the thread that made them ready (so a tiny graph runs on the caller's thread without a
// hop), hands expensive ones to the device's pool when other work is ready too, and never
// parks a thread on an asynchronous kernel: a queue dequeue or a Recv calls back when done.
// The first error aborts the step; nodes not yet started are skipped and the step reports
// that error, prefixed with the failing node. Cancellation stops scheduling new nodes.
#ifndef TENSORWEAVE_SRC_RUNTIME_EXECUTOR_H_
#define TENSORWEAVE_SRC_RUNTIME_EXECUTOR_H_

#include <functional>
#include <memory>
#include <vector>

#include "absl/time/time.h"
#include "src/framework/op_kernel.h"
#include "src/graph/graph.h"

namespace tw {

// Thread-safe: many steps may run at once.
class Executor {
 public:
  struct Args {
    int64_t step_id = 0;
    CallFrame* call_frame = nullptr;
    Rendezvous* rendezvous = nullptr;
    CancellationManager* cancellation_manager = nullptr;  // required
    absl::Time deadline = absl::InfiniteFuture();
    std::string_view session_handle;  // must outlive the step
    // Where the step's kernels may touch files, instead of the device's policy; null for
    // the device's. Must outlive the step.
    const FileAccessPolicy* file_access = nullptr;
  };
  using DoneCallback = std::function<void(const Status&)>;

  // Creates every kernel; the error of the first kernel that cannot be created, naming it.
  // `device` must outlive the executor.
  static StatusOr<std::unique_ptr<Executor>> Create(std::unique_ptr<const Graph> graph,
                                                    DeviceBase* device);
  ~Executor();

  // Runs one step; `done` is called exactly once, on some thread, when every started
  // kernel has finished. Args' pointees must stay valid until then.
  void RunAsync(const Args& args, DoneCallback done);
  // RunAsync, waiting for the result.
  Status Run(const Args& args);

  const Graph& graph() const { return *graph_; }

 private:
  friend class ExecutorStep;
  struct OutEdge {
    int dst;
    int dst_slot;  // index into the step's input buffer; -1 for control edges
    int src_output;
  };
  struct NodeItem {
    std::unique_ptr<OpKernel> kernel;
    bool is_async = false;
    bool expensive = false;
    int num_inputs = 0;
    int input_start = 0;  // first slot of this node's inputs in the step's input buffer
    int initial_pending = 0;
    std::vector<OutEdge> out;
    std::vector<bool> outputs_used;  // per output: has a data consumer
  };

  Executor(std::unique_ptr<const Graph> graph, DeviceBase* device)
      : graph_(std::move(graph)), device_(device), parallel_(device->NumThreads() > 1) {}

  std::unique_ptr<const Graph> graph_;
  DeviceBase* device_;
  // Whether independent expensive nodes go to the device's pool to run in parallel.
  const bool parallel_;
  std::vector<NodeItem> items_;
  std::vector<int> roots_;
  int total_inputs_ = 0;
};

}  // namespace tw

#endif  // TENSORWEAVE_SRC_RUNTIME_EXECUTOR_H_
