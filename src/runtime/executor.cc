#include "src/runtime/executor.h"

#include <atomic>
#include <deque>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"

namespace tw {

StatusOr<std::unique_ptr<Executor>> Executor::Create(std::unique_ptr<const Graph> graph,
                                                     DeviceBase* device) {
  std::unique_ptr<Executor> ex(new Executor(std::move(graph), device));
  const std::vector<Node>& nodes = ex->graph_->nodes();
  ex->items_.resize(nodes.size());
  for (const Node& n : nodes) {
    NodeItem& item = ex->items_[n.id];
    TW_ASSIGN_OR_RETURN(item.kernel, KernelRegistry::Global().CreateKernel(n.def, device));
    item.is_async = item.kernel->AsAsync() != nullptr;
    item.expensive = item.kernel->IsExpensive();
    item.num_inputs = static_cast<int>(n.input_types.size());
    item.input_start = ex->total_inputs_;
    item.initial_pending = static_cast<int>(n.in_edges.size());
    ex->total_inputs_ += item.num_inputs;
    if (item.initial_pending == 0) ex->roots_.push_back(n.id);
  }
  for (const Node& n : nodes) {
    NodeItem& item = ex->items_[n.id];
    item.outputs_used.assign(n.output_types.size(), false);
    for (const Edge& e : n.out_edges) {
      const int slot = e.IsControl() ? -1 : ex->items_[e.dst].input_start + e.dst_input;
      item.out.push_back({e.dst, slot, e.src_output});
      if (!e.IsControl()) item.outputs_used[e.src_output] = true;
    }
  }
  return ex;
}

Executor::~Executor() = default;

// The state of one running step. Deletes itself after calling the done callback.
class ExecutorStep {
 public:
  ExecutorStep(const Executor* ex, const Executor::Args& args, Executor::DoneCallback done)
      : ex_(ex),
        args_(args),
        done_(std::move(done)),
        inputs_(static_cast<size_t>(ex->total_inputs_)),
        pending_(new std::atomic<int>[ex->items_.size()]) {
    for (size_t i = 0; i < ex->items_.size(); ++i) {
      pending_[i].store(ex->items_[i].initial_pending, std::memory_order_relaxed);
    }
  }

  void Start() {
    if (ex_->roots_.empty()) {
      Finish();
      return;
    }
    outstanding_.store(static_cast<int>(ex_->roots_.size()), std::memory_order_relaxed);
    std::deque<int> ready(ex_->roots_.begin(), ex_->roots_.end());
    RunReady(&ready);
  }

 private:
  // Runs nodes until `ready` is empty; nodes they make ready are appended (or scheduled).
  void RunReady(std::deque<int>* ready) {
    while (!ready->empty()) {
      const int id = ready->front();
      ready->pop_front();
      if (aborted_.load(std::memory_order_acquire) || args_.cancellation_manager->IsCancelled()) {
        if (args_.cancellation_manager->IsCancelled()) {
          Abort(errors::Cancelled("step ", args_.step_id, " was cancelled"));
        }
        NodeDone(0);
        continue;
      }
      RunNode(id, ready);
    }
  }

  OpKernelContext::Params MakeParams(int id, const std::vector<Tensor>* inputs) {
    OpKernelContext::Params p;
    p.step_id = args_.step_id;
    p.device = ex_->device_;
    p.kernel = ex_->items_[id].kernel.get();
    p.inputs = inputs;
    p.cancellation_manager = args_.cancellation_manager;
    p.rendezvous = args_.rendezvous;
    p.call_frame = args_.call_frame;
    p.deadline = args_.deadline;
    p.session_handle = args_.session_handle;
    p.file_access = args_.file_access;
    p.outputs_used = &ex_->items_[id].outputs_used;
    return p;
  }

  // Moves the node's inputs out of the step's buffer: each value is consumed once, so
  // memory is released as soon as the last consumer ran.
  std::vector<Tensor> TakeInputs(const Executor::NodeItem& item) {
    std::vector<Tensor> in(static_cast<size_t>(item.num_inputs));
    for (int i = 0; i < item.num_inputs; ++i) in[i] = std::move(inputs_[item.input_start + i]);
    return in;
  }

  void RunNode(int id, std::deque<int>* ready) {
    const Executor::NodeItem& item = ex_->items_[id];
    if (item.is_async) {
      struct AsyncState {
        std::vector<Tensor> inputs;
        std::unique_ptr<OpKernelContext> ctx;
      };
      auto* state = new AsyncState{TakeInputs(item), nullptr};
      state->ctx = std::make_unique<OpKernelContext>(MakeParams(id, &state->inputs));
      item.kernel->AsAsync()->ComputeAsync(state->ctx.get(), [this, id, state] {
        std::deque<int> next;
        const int newly_ready = Propagate(id, state->ctx.get(), &next);
        delete state;
        // Continue on this thread: whatever completed the async kernel (an enqueue on
        // another step, a cancellation) runs the cheap successors.
        NodeDone(newly_ready, &next);
      });
      return;
    }
    std::vector<Tensor> inputs = TakeInputs(item);
    OpKernelContext ctx(MakeParams(id, &inputs));
    item.kernel->Compute(&ctx);
    std::deque<int> next;
    const int newly_ready = Propagate(id, &ctx, &next);
    if (newly_ready == 0) {
      MaybeFinish();
      return;
    }
    // This node's count passes to the first node it made ready; the others add theirs.
    if (newly_ready > 1) outstanding_.fetch_add(newly_ready - 1, std::memory_order_acq_rel);
    // Cheap nodes run inline; expensive ones go to the pool when there is other work, so
    // independent expensive nodes run in parallel. Not on a device of one thread: its pool
    // would add a hand-off between threads and no parallelism.
    for (int n : next) {
      if (ex_->parallel_ && ex_->items_[n].expensive && (!ready->empty() || next.size() > 1)) {
        ex_->device_->Schedule([this, n] {
          std::deque<int> q{n};
          RunReady(&q);
        });
      } else {
        ready->push_back(n);
      }
    }
  }

  // Records outputs into successors' inputs; returns how many nodes became ready.
  int Propagate(int id, OpKernelContext* ctx, std::deque<int>* next) {
    if (!ctx->ok()) {
      const OpKernel& k = *ex_->items_[id].kernel;
      Status s = ctx->status();
      Abort(IsCancelled(s)
                ? s
                : errors::Annotate(s, "node " + k.name() + " (" + k.type_string() + "): "));
      return 0;
    }
    int newly_ready = 0;
    std::vector<Tensor>& outputs = *ctx->outputs();
    for (const Executor::OutEdge& e : ex_->items_[id].out) {
      if (e.dst_slot >= 0) inputs_[e.dst_slot] = outputs[e.src_output];
      if (pending_[e.dst].fetch_sub(1, std::memory_order_acq_rel) == 1) {
        next->push_back(e.dst);
        ++newly_ready;
      }
    }
    return newly_ready;
  }

  // For async completions: account for the node and run what it made ready.
  void NodeDone(int newly_ready, std::deque<int>* next = nullptr) {
    if (newly_ready > 0) {
      if (newly_ready > 1) outstanding_.fetch_add(newly_ready - 1, std::memory_order_acq_rel);
      RunReady(next);
      return;
    }
    MaybeFinish();
  }

  void MaybeFinish() {
    if (outstanding_.fetch_sub(1, std::memory_order_acq_rel) == 1) Finish();
  }

  // The first error wins; it also cancels the step, so kernels of this step that wait (a
  // dequeue, a Recv) wake up instead of holding the step open. Their Cancelled errors are
  // consequences and are not reported.
  void Abort(const Status& s) {
    bool first = false;
    {
      absl::MutexLock lock(&mu_);
      if (status_.ok()) {
        status_ = s;
        first = true;
      }
    }
    aborted_.store(true, std::memory_order_release);
    if (first && !IsCancelled(s)) args_.cancellation_manager->StartCancel();
  }

  void Finish() {
    Status s;
    {
      absl::MutexLock lock(&mu_);
      s = status_;
    }
    Executor::DoneCallback done = std::move(done_);
    delete this;
    done(s);
  }

  const Executor* ex_;
  const Executor::Args args_;
  Executor::DoneCallback done_;
  std::vector<Tensor> inputs_;
  std::unique_ptr<std::atomic<int>[]> pending_;
  std::atomic<int> outstanding_{0};
  std::atomic<bool> aborted_{false};
  absl::Mutex mu_;
  Status status_ ABSL_GUARDED_BY(mu_);
};

void Executor::RunAsync(const Args& args, DoneCallback done) {
  (new ExecutorStep(this, args, std::move(done)))->Start();
}

Status Executor::Run(const Args& args) {
  absl::Notification finished;
  Status result;
  RunAsync(args, [&](const Status& s) {
    result = s;
    finished.Notify();
  });
  finished.WaitForNotification();
  return result;
}

}  // namespace tw
