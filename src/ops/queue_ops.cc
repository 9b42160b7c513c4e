// FIFO queue ops: definitions, CPU kernels and graph-building functions. The queue itself
// is FIFOQueueResource (fifo_queue.h); enqueue and dequeue are asynchronous kernels.
#include "tensorweave/ops/queue_ops.h"

#include <cstring>

#include "src/framework/op_kernel.h"
#include "src/framework/resource_lookup.h"
#include "src/ops/array_util.h"
#include "src/ops/fifo_queue.h"
#include "src/ops/resource_attrs.h"

namespace tw {
namespace {

using internal::CopyIntoPaddedSlot;

TW_REGISTER_OP("FIFOQueue")
    .Output("handle: resource")
    .Attr("component_types: list(type) >= 1")
    .Attr("shapes: list(shape) = []")
    .Attr("capacity: int = -1")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .SetIsStateful()
    .Doc("A first-in first-out queue; shared by shared_name, else private to the session.");

TW_REGISTER_OP("PaddingFIFOQueue")
    .Output("handle: resource")
    .Attr("component_types: list(type) >= 1")
    .Attr("shapes: list(shape) = []")
    .Attr("capacity: int = -1")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .SetIsStateful()
    .Doc("A FIFO queue whose elements may differ in shape; DequeueMany pads them with zeros.");

TW_REGISTER_OP("RandomShuffleQueue")
    .Output("handle: resource")
    .Attr("component_types: list(type) >= 1")
    .Attr("shapes: list(shape) = []")
    .Attr("capacity: int = -1")
    .Attr("min_after_dequeue: int = 0")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .SetIsStateful()
    .Doc("A queue that dequeues a uniformly random element, keeping min_after_dequeue back.");

TW_REGISTER_OP("PriorityQueue")
    .Output("handle: resource")
    .Attr("component_types: list(type) = []")
    .Attr("shapes: list(shape)")
    .Attr("capacity: int = -1")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .SetIsStateful()
    .Doc("A queue of (int64 priority, components...) that dequeues the smallest priority first.");

// The kernel of every queue-making op: one per session and node unless shared by name.
template <QueueOrder::Kind kKind>
class MakeQueueOp : public OpKernel {
 public:
  explicit MakeQueueOp(OpKernelConstruction* c) : OpKernel(c) {
    order_.kind = kKind;
    Status s = c->GetAttr("component_types", &types_);
    if (s.ok()) s = c->GetAttr("shapes", &shapes_);
    if (s.ok()) s = c->GetAttr("capacity", &capacity_);
    if (s.ok() && kKind == QueueOrder::Kind::kRandomShuffle) {
      s = c->GetAttr("min_after_dequeue", &order_.min_after_dequeue);
      if (s.ok()) s = c->GetAttr("seed", &order_.seed);
      if (s.ok()) s = c->GetAttr("seed2", &order_.seed2);
      if (s.ok() && order_.min_after_dequeue < 0) {
        s = errors::InvalidArgument("min_after_dequeue ", order_.min_after_dequeue,
                                    " must be >= 0");
      }
    }
    if (s.ok() && kKind == QueueOrder::Kind::kPriority) {
      // The priority is component 0, as TensorFlow's PriorityQueue adds it.
      if (shapes_.size() != types_.size()) {
        s = errors::InvalidArgument("PriorityQueue ", c->def().name(), " has ", types_.size(),
                                    " component types but ", shapes_.size(),
                                    " shapes; it needs one shape per component");
      }
      types_.insert(types_.begin(), DT_INT64);
      shapes_.insert(shapes_.begin(), PartialShape::Of({}));
    }
    if (s.ok() && !shapes_.empty() && shapes_.size() != types_.size()) {
      s = errors::InvalidArgument(QueueKindName(kKind), " ", c->def().name(), " has ",
                                  types_.size(), " component types but ", shapes_.size(),
                                  " shapes");
    }
    if (s.ok() && kKind == QueueOrder::Kind::kPaddingFifo && shapes_.empty()) {
      s = errors::InvalidArgument("PaddingFIFOQueue ", c->def().name(),
                                  " needs a shape per component (dimensions may be unknown)");
    }
    // The same names as a variable's: a container the runtime keeps for itself, or a name
    // like the private queues' "_<session>_<node>", must not be reachable from a graph.
    if (s.ok()) s = location_.Init(c);
    c->SetStatus(s);
  }

  void Compute(OpKernelContext* ctx) override {
    const std::string container = location_.Container(ctx);
    const std::string name = location_.Name(ctx, this->name());
    auto queue = ctx->resource_manager()->LookupOrCreate<FIFOQueueResource>(
        container, name, [&]() -> StatusOr<std::shared_ptr<FIFOQueueResource>> {
          return std::make_shared<FIFOQueueResource>(name, types_, shapes_, capacity_, order_);
        });
    TW_OP_REQUIRES_OK(ctx, queue.status());
    TW_OP_REQUIRES_OK(ctx, (*queue)->MatchesSpec(types_, shapes_, capacity_, order_));
    ctx->set_output(0, Tensor::Scalar(ResourceHandle{ctx->device()->name(), container, name,
                                                     FIFOQueueResource::kTypeName}));
  }

 private:
  std::vector<DataType> types_;
  std::vector<PartialShape> shapes_;
  int64_t capacity_ = -1;
  QueueOrder order_;
  ResourceLocation location_;
};
TW_REGISTER_KERNEL("FIFOQueue", "CPU", MakeQueueOp<QueueOrder::Kind::kFifo>);
TW_REGISTER_KERNEL("PaddingFIFOQueue", "CPU", MakeQueueOp<QueueOrder::Kind::kPaddingFifo>);
TW_REGISTER_KERNEL("RandomShuffleQueue", "CPU", MakeQueueOp<QueueOrder::Kind::kRandomShuffle>);
TW_REGISTER_KERNEL("PriorityQueue", "CPU", MakeQueueOp<QueueOrder::Kind::kPriority>);

StatusOr<std::shared_ptr<FIFOQueueResource>> LookupQueue(OpKernelContext* ctx) {
  auto q = LookupResource<FIFOQueueResource>(*ctx, ctx->input(0));
  if (IsNotFound(q.status())) {
    const ResourceHandle& h = ctx->input(0).flat<ResourceHandle>()[0];
    return errors::NotFound("queue ", h.name, " does not exist on ", h.device);
  }
  return q;
}

// Row `i` of `t` (a view) as one element of an EnqueueMany.
StatusOr<Tensor> Row(const Tensor& t, int64_t i) {
  TW_ASSIGN_OR_RETURN(Tensor rows, t.Slice(i, i + 1));
  std::vector<int64_t> dims(t.shape().dims().begin() + 1, t.shape().dims().end());
  TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::Create(dims));
  Tensor out(t.dtype(), shape);
  if (t.dtype() == DT_STRING) {
    std::copy_n(rows.flat<std::string>().begin(), out.num_elements(),
                out.flat<std::string>().begin());
  } else if (out.TotalBytes() > 0) {
    std::memcpy(out.raw_data(), rows.raw_data(), out.TotalBytes());
  }
  return out;
}

// Stacks component `c` of `tuples` along a new first dimension. With `pad`, elements of one
// rank but different shapes are placed at the origin of the largest, zeros (empty strings)
// around them, as TensorFlow's PaddingFIFOQueue does.
StatusOr<Tensor> Stack(const std::vector<FIFOQueueResource::Tuple>& tuples, size_t c,
                       DataType dtype, bool pad = false) {
  std::vector<int64_t> dims{static_cast<int64_t>(tuples.size())};
  if (!tuples.empty()) {
    const TensorShape& first = tuples[0][c].shape();
    std::vector<int64_t> largest(first.dims().begin(), first.dims().end());
    for (const auto& t : tuples) {
      const TensorShape& shape = t[c].shape();
      if (pad && shape.rank() == first.rank()) {
        for (int d = 0; d < shape.rank(); ++d) largest[d] = std::max(largest[d], shape.dim(d));
      } else if (!(shape == first)) {
        return errors::InvalidArgument("cannot stack queue elements of shapes ",
                                       first.DebugString(), " and ", shape.DebugString());
      }
    }
    dims.insert(dims.end(), largest.begin(), largest.end());
  }
  TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::Create(dims));
  TW_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(dtype, shape));
  if (pad && dtype != DT_STRING && out.TotalBytes() > 0) {
    std::memset(out.raw_data(), 0, out.TotalBytes());
  }
  const int64_t slot = tuples.empty() ? 0 : out.num_elements() / dims[0];
  for (size_t i = 0; i < tuples.size(); ++i) {
    const Tensor& e = tuples[i][c];
    if (e.num_elements() == slot) {  // the element fills its slot: one copy
      if (dtype == DT_STRING) {
        std::copy_n(e.flat<std::string>().begin(), e.num_elements(),
                    out.flat<std::string>().begin() + i * slot);
      } else if (e.TotalBytes() > 0) {
        std::memcpy(static_cast<char*>(out.raw_data()) + i * e.TotalBytes(), e.raw_data(),
                    e.TotalBytes());
      }
      continue;
    }
    CopyIntoPaddedSlot(e, static_cast<int64_t>(i), &out);  // smaller: padded around
  }
  return out;
}

template <bool kMany>
class EnqueueOp : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    auto queue = LookupQueue(ctx);
    TW_OP_REQUIRES_OK_ASYNC(ctx, queue.status(), done);
    std::vector<FIFOQueueResource::Tuple> tuples;
    const int components = ctx->num_inputs() - 1;
    if (!kMany) {
      FIFOQueueResource::Tuple t;
      for (int i = 0; i < components; ++i) t.push_back(ctx->input(i + 1));
      TW_OP_REQUIRES_OK_ASYNC(ctx, (*queue)->ValidateTuple(t), done);
      tuples.push_back(std::move(t));
    } else {
      FIFOQueueResource::Tuple batch;
      for (int i = 1; i <= components; ++i) batch.push_back(ctx->input(i));
      TW_OP_REQUIRES_OK_ASYNC(ctx, (*queue)->ValidateManyTuple(batch), done);
      const int64_t n = batch[0].dim(0);
      for (int64_t r = 0; r < n; ++r) {
        FIFOQueueResource::Tuple t;
        for (int i = 1; i <= components; ++i) {
          auto row = Row(ctx->input(i), r);
          TW_OP_REQUIRES_OK_ASYNC(ctx, row.status(), done);
          t.push_back(*std::move(row));
        }
        tuples.push_back(std::move(t));
      }
    }
    (*queue)->Enqueue(std::move(tuples), ctx->cancellation_manager(),
                      [ctx, done = std::move(done)](const Status& s) {
                        ctx->SetStatus(s);
                        done();
                      });
  }
};

TW_REGISTER_OP("QueueEnqueue")
    .Input("handle: resource")
    .Input("components: Tcomponents")
    .Attr("Tcomponents: list(type) >= 1")
    .SetIsStateful()
    .Doc("Adds one element to the queue, waiting while it is full.");
TW_REGISTER_KERNEL("QueueEnqueue", "CPU", EnqueueOp<false>);

TW_REGISTER_OP("QueueEnqueueMany")
    .Input("handle: resource")
    .Input("components: Tcomponents")
    .Attr("Tcomponents: list(type) >= 1")
    .SetIsStateful()
    .Doc("Adds the rows of the components as elements, waiting while the queue is full.");
TW_REGISTER_KERNEL("QueueEnqueueMany", "CPU", EnqueueOp<true>);

// kMode: 0 Dequeue, 1 DequeueMany, 2 DequeueUpTo.
template <int kMode>
class DequeueOp : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    auto queue = LookupQueue(ctx);
    TW_OP_REQUIRES_OK_ASYNC(ctx, queue.status(), done);
    int64_t n = 1;
    if (kMode != 0) {
      TW_OP_REQUIRES_ASYNC(ctx, ctx->input(1).num_elements() == 1,
                           errors::InvalidArgument("n must be a scalar, got shape ",
                                                   ctx->input(1).shape().DebugString()),
                           done);
      n = ctx->input(1).flat<int32_t>()[0];
      TW_OP_REQUIRES_ASYNC(
          ctx, n >= 0,
          errors::InvalidArgument("cannot dequeue a negative number (", n, ") of elements"), done);
    }
    if (kMode != 0) {
      // As TensorFlow: batches are stacked per component, which needs a shape for each.
      TW_OP_REQUIRES_ASYNC(ctx, (*queue)->has_shapes(),
                           errors::InvalidArgument(QueueKindName((*queue)->order().kind),
                                                   "'s DequeueMany and DequeueUpTo require the "
                                                   "components to have specified shapes."),
                           done);
    }
    std::vector<DataType> types = (*queue)->component_types();
    TW_OP_REQUIRES_ASYNC(ctx, static_cast<int>(types.size()) == num_outputs(),
                         errors::InvalidArgument("queue has ", types.size(),
                                                 " components but the op expects ", num_outputs()),
                         done);
    const bool pad = (*queue)->order().kind == QueueOrder::Kind::kPaddingFifo;
    (*queue)->Dequeue(n, kMode == 2, ctx->cancellation_manager(),
                      [ctx, types, pad,
                       done = std::move(done)](StatusOr<std::vector<FIFOQueueResource::Tuple>> r) {
                        if (!r.ok()) {
                          ctx->SetStatus(r.status());
                        } else if (kMode == 0) {
                          for (size_t c = 0; c < types.size(); ++c)
                            ctx->set_output(static_cast<int>(c), (*r)[0][c]);
                        } else {
                          for (size_t c = 0; c < types.size(); ++c) {
                            auto stacked = Stack(*r, c, types[c], pad);
                            if (!stacked.ok()) {
                              ctx->SetStatus(stacked.status());
                              break;
                            }
                            ctx->set_output(static_cast<int>(c), *std::move(stacked));
                          }
                        }
                        done();
                      });
  }
};

TW_REGISTER_OP("QueueDequeue")
    .Input("handle: resource")
    .Output("components: component_types")
    .Attr("component_types: list(type) >= 1")
    .SetIsStateful()
    .Doc("Takes one element, waiting while the queue is empty.");
TW_REGISTER_KERNEL("QueueDequeue", "CPU", DequeueOp<0>);

TW_REGISTER_OP("QueueDequeueMany")
    .Input("handle: resource")
    .Input("n: int32")
    .Output("components: component_types")
    .Attr("component_types: list(type) >= 1")
    .SetIsStateful()
    .Doc("Takes n elements, stacked along a new first dimension.");
TW_REGISTER_KERNEL("QueueDequeueMany", "CPU", DequeueOp<1>);

TW_REGISTER_OP("QueueDequeueUpTo")
    .Input("handle: resource")
    .Input("n: int32")
    .Output("components: component_types")
    .Attr("component_types: list(type) >= 1")
    .SetIsStateful()
    .Doc("Like QueueDequeueMany, but a closed queue gives what it has left.");
TW_REGISTER_KERNEL("QueueDequeueUpTo", "CPU", DequeueOp<2>);

TW_REGISTER_OP("QueueClose")
    .Input("handle: resource")
    .Attr("cancel_pending_enqueues: bool = false")
    .SetIsStateful()
    .Doc("Closes the queue: no more enqueues; dequeues drain what is left.");

// Asynchronous: without cancel_pending_enqueues the close waits behind pending enqueues.
class QueueCloseOp : public AsyncOpKernel {
 public:
  explicit QueueCloseOp(OpKernelConstruction* c) : AsyncOpKernel(c) {
    c->SetStatus(c->GetAttr("cancel_pending_enqueues", &cancel_pending_));
  }
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    auto queue = LookupQueue(ctx);
    TW_OP_REQUIRES_OK_ASYNC(ctx, queue.status(), done);
    (*queue)->Close(cancel_pending_, ctx->cancellation_manager(),
                    [ctx, done = std::move(done)](const Status& s) {
                      ctx->SetStatus(s);
                      done();
                    });
  }

 private:
  bool cancel_pending_ = false;
};
TW_REGISTER_KERNEL("QueueClose", "CPU", QueueCloseOp);

TW_REGISTER_OP("QueueSize")
    .Input("handle: resource")
    .Output("size: int32")
    .SetIsStateful()
    .Doc("The number of elements in the queue.");

class QueueSizeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    auto queue = LookupQueue(ctx);
    TW_OP_REQUIRES_OK(ctx, queue.status());
    ctx->set_output(0, Tensor::Scalar(static_cast<int32_t>((*queue)->size())));
  }
};
TW_REGISTER_KERNEL("QueueSize", "CPU", QueueSizeOp);

TW_REGISTER_OP("QueueIsClosed")
    .Input("handle: resource")
    .Output("is_closed: bool")
    .SetIsStateful()
    .Doc("Whether the queue is closed (a close waiting behind pending enqueues has not yet).");

class QueueIsClosedOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    auto queue = LookupQueue(ctx);
    TW_OP_REQUIRES_OK(ctx, queue.status());
    ctx->set_output(0, Tensor::Scalar((*queue)->is_closed()));
  }
};
TW_REGISTER_KERNEL("QueueIsClosed", "CPU", QueueIsClosedOp);

}  // namespace

namespace ops {

Queue FIFOQueue(const Scope& scope, const std::vector<DataType>& component_types,
                const FIFOQueueOptions& options) {
  std::vector<PartialShape> shapes;
  for (const auto& s : options.shapes) shapes.push_back(PartialShape::Of(s));
  Queue q;
  q.component_types = component_types;
  q.handle = scope.AddNodeOutput("FIFOQueue", {},
                                 {{"component_types", MakeAttr(component_types)},
                                  {"shapes", MakeAttr(shapes)},
                                  {"capacity", MakeAttr(options.capacity)},
                                  {"container", MakeAttr(options.container)},
                                  {"shared_name", MakeAttr(options.shared_name)}});
  return q;
}

namespace {
AttrMap QueueAttrs(const std::vector<DataType>& component_types, const FIFOQueueOptions& options) {
  std::vector<PartialShape> shapes;
  for (const auto& s : options.shapes) shapes.push_back(PartialShape::Of(s));
  return {{"component_types", MakeAttr(component_types)},
          {"shapes", MakeAttr(shapes)},
          {"capacity", MakeAttr(options.capacity)},
          {"container", MakeAttr(options.container)},
          {"shared_name", MakeAttr(options.shared_name)}};
}
}  // namespace

Queue PaddingFIFOQueue(const Scope& scope, const std::vector<DataType>& component_types,
                       const FIFOQueueOptions& options) {
  return {scope.AddNodeOutput("PaddingFIFOQueue", {}, QueueAttrs(component_types, options)),
          component_types};
}

Queue RandomShuffleQueue(const Scope& scope, const std::vector<DataType>& component_types,
                         const RandomShuffleQueueOptions& options) {
  AttrMap attrs = QueueAttrs(component_types, options.queue);
  attrs["min_after_dequeue"] = MakeAttr(options.min_after_dequeue);
  attrs["seed"] = MakeAttr(options.seed);
  attrs["seed2"] = MakeAttr(options.seed2);
  return {scope.AddNodeOutput("RandomShuffleQueue", {}, attrs), component_types};
}

Queue PriorityQueue(const Scope& scope, const std::vector<DataType>& component_types,
                    const FIFOQueueOptions& options) {
  std::vector<DataType> with_priority{DT_INT64};
  with_priority.insert(with_priority.end(), component_types.begin(), component_types.end());
  return {scope.AddNodeOutput("PriorityQueue", {}, QueueAttrs(component_types, options)),
          with_priority};
}

Operation QueueEnqueue(const Scope& scope, const Queue& queue, const InputList& components) {
  return scope.AddNode("QueueEnqueue", {{queue.handle}, components});
}

Operation QueueEnqueueMany(const Scope& scope, const Queue& queue, const InputList& components) {
  return scope.AddNode("QueueEnqueueMany", {{queue.handle}, components});
}

namespace {
// One Output per component, also when the builder refused the node: callers index the
// result by component, and an invalid Output used later is the builder's error, not a read
// past the end of an empty vector.
std::vector<Output> Outputs(const Operation& op, const Queue& queue) {
  std::vector<Output> out;
  for (size_t i = 0; i < queue.component_types.size(); ++i) {
    out.push_back(op.valid() ? Output(op, static_cast<int>(i)) : Output());
  }
  return out;
}
}  // namespace

std::vector<Output> QueueDequeue(const Scope& scope, const Queue& queue) {
  return Outputs(scope.AddNode("QueueDequeue", {{queue.handle}},
                               {{"component_types", MakeAttr(queue.component_types)}}),
                 queue);
}

std::vector<Output> QueueDequeueMany(const Scope& scope, const Queue& queue, Input n) {
  return Outputs(scope.AddNode("QueueDequeueMany", {{queue.handle}, {n}},
                               {{"component_types", MakeAttr(queue.component_types)}}),
                 queue);
}

std::vector<Output> QueueDequeueUpTo(const Scope& scope, const Queue& queue, Input n) {
  return Outputs(scope.AddNode("QueueDequeueUpTo", {{queue.handle}, {n}},
                               {{"component_types", MakeAttr(queue.component_types)}}),
                 queue);
}

Operation QueueClose(const Scope& scope, const Queue& queue, bool cancel_pending_enqueues) {
  return scope.AddNode("QueueClose", {{queue.handle}},
                       {{"cancel_pending_enqueues", MakeAttr(cancel_pending_enqueues)}});
}

Output QueueSize(const Scope& scope, const Queue& queue) {
  return scope.AddNodeOutput("QueueSize", {{queue.handle}});
}

Output QueueIsClosed(const Scope& scope, const Queue& queue) {
  return scope.AddNodeOutput("QueueIsClosed", {{queue.handle}});
}

}  // namespace ops
}  // namespace tw
