// tf.data's iterator ops: Iterator (an uninitialized iterator, for
// make_initializable_iterator and Iterator.from_structure), MakeIterator (its initializer:
// builds the pipeline from the `dataset` attribute, a serialized proto::DatasetDef, and
// the captured inputs), OneShotIterator (built and initialized when first made) and
// IteratorGetNext (asynchronous: iterator_resource.h).
#include "tensorweave/ops/iterator_ops.h"

#include "src/data/iterator_resource.h"
#include "src/framework/op_kernel.h"
#include "src/framework/resource_lookup.h"
#include "src/graph/gradient_registry.h"
#include "src/ops/resource_attrs.h"
#include "tensorweave/protobuf/tensor.pb.h"

namespace tw::data {
namespace {

// A serialized DatasetDef attribute, parsed; InvalidArgument naming the node otherwise.
Status ParseDatasetAttr(OpKernelConstruction* c, proto::DatasetDef* def) {
  std::string bytes;
  TW_RETURN_IF_ERROR(c->GetAttr("dataset", &bytes));
  if (!def->ParseFromString(bytes)) {
    return errors::InvalidArgument("node ", c->def().name(),
                                   ": attribute dataset is not a serialized DatasetDef");
  }
  return OkStatus();
}

// The kernels that make an iterator resource: one per session and node unless shared.
class MakeIteratorResourceOp : public OpKernel {
 public:
  explicit MakeIteratorResourceOp(OpKernelConstruction* c) : OpKernel(c) {
    Status s = c->GetAttr("output_types", &types_);
    if (s.ok()) s = c->GetAttr("output_shapes", &shapes_);
    if (s.ok() && !shapes_.empty() && shapes_.size() != types_.size()) {
      s = errors::InvalidArgument("node ", c->def().name(), ": ", types_.size(),
                                  " output types but ", shapes_.size(), " output shapes");
    }
    if (s.ok()) s = location_.Init(c);
    c->SetStatus(s);
  }

 protected:
  // Finds or makes the resource; `init` (may be null) initializes one just made.
  void Produce(OpKernelContext* ctx, const std::function<Status(IteratorResource*)>& init) {
    const std::string container = location_.Container(ctx);
    const std::string name = location_.Name(ctx, this->name());
    auto it = ctx->resource_manager()->LookupOrCreate<IteratorResource>(
        container, name, [&]() -> StatusOr<std::shared_ptr<IteratorResource>> {
          auto made = std::make_shared<IteratorResource>(name, types_, shapes_);
          if (init) TW_RETURN_IF_ERROR(init(made.get()));
          return made;
        });
    TW_OP_REQUIRES_OK(ctx, it.status());
    TW_OP_REQUIRES_OK(ctx, (*it)->MatchesSpec(types_, shapes_));
    ctx->set_output(0, Tensor::Scalar(ResourceHandle{ctx->device()->name(), container, name,
                                                     IteratorResource::kTypeName}));
  }

 private:
  std::vector<DataType> types_;
  std::vector<PartialShape> shapes_;
  ResourceLocation location_;
};

TW_REGISTER_OP("Iterator")
    .Output("handle: resource")
    .Attr("output_types: list(type) >= 1")
    .Attr("output_shapes: list(shape) = []")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .SetIsStateful()
    .Doc("An iterator to be initialized by MakeIterator.");

class IteratorOp : public MakeIteratorResourceOp {
 public:
  using MakeIteratorResourceOp::MakeIteratorResourceOp;
  void Compute(OpKernelContext* ctx) override { Produce(ctx, nullptr); }
};
TW_REGISTER_KERNEL("Iterator", "CPU", IteratorOp);

BuildContext ContextOf(OpKernelContext* ctx, const std::vector<Tensor>* inputs) {
  return {.device = ctx->device(), .file_access = ctx->file_access(), .inputs = inputs};
}

std::vector<Tensor> InputsFrom(OpKernelContext* ctx, int first) {
  std::vector<Tensor> inputs;
  for (int i = first; i < ctx->num_inputs(); ++i) inputs.push_back(ctx->input(i));
  return inputs;
}

TW_REGISTER_OP("OneShotIterator")
    .Input("captures: Tcaptures")
    .Output("handle: resource")
    .Attr("Tcaptures: list(type) = []")
    .Attr("dataset: string")
    .Attr("output_types: list(type) >= 1")
    .Attr("output_shapes: list(shape) = []")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .SetIsStateful()
    .Doc("An iterator over the dataset, initialized when it is made.");

class OneShotIteratorOp : public MakeIteratorResourceOp {
 public:
  explicit OneShotIteratorOp(OpKernelConstruction* c) : MakeIteratorResourceOp(c) {
    c->SetStatus(ParseDatasetAttr(c, &def_));
  }
  void Compute(OpKernelContext* ctx) override {
    const std::vector<Tensor> inputs = InputsFrom(ctx, 0);
    Produce(ctx, [&](IteratorResource* it) -> Status {
      return it->Initialize(def_, inputs, ContextOf(ctx, nullptr));
    });
  }

 private:
  proto::DatasetDef def_;
};
TW_REGISTER_KERNEL("OneShotIterator", "CPU", OneShotIteratorOp);

StatusOr<std::shared_ptr<IteratorResource>> LookupIterator(OpKernelContext* ctx) {
  auto it = LookupResource<IteratorResource>(*ctx, ctx->input(0));
  if (IsNotFound(it.status())) {
    const ResourceHandle& h = ctx->input(0).flat<ResourceHandle>()[0];
    return errors::NotFound("iterator ", h.name, " does not exist on ", h.device);
  }
  return it;
}

TW_REGISTER_OP("MakeIterator")
    .Input("iterator: resource")
    .Input("captures: Tcaptures")
    .Attr("Tcaptures: list(type) = []")
    .Attr("dataset: string")
    .SetIsStateful()
    .Doc("Initializes the iterator on the dataset, from its first element.");

class MakeIteratorOp : public OpKernel {
 public:
  explicit MakeIteratorOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(ParseDatasetAttr(c, &def_));
  }
  void Compute(OpKernelContext* ctx) override {
    auto it = LookupIterator(ctx);
    TW_OP_REQUIRES_OK(ctx, it.status());
    TW_OP_REQUIRES_OK(ctx, (*it)->Initialize(def_, InputsFrom(ctx, 1), ContextOf(ctx, nullptr)));
  }

 private:
  proto::DatasetDef def_;
};
TW_REGISTER_KERNEL("MakeIterator", "CPU", MakeIteratorOp);

TW_REGISTER_OP("IteratorGetNext")
    .Input("iterator: resource")
    .Output("components: output_types")
    .Attr("output_types: list(type) >= 1")
    .Attr("output_shapes: list(shape) = []")
    .SetIsStateful()
    .Doc("The iterator's next element; OutOfRange \"End of sequence\" after the last.");

class IteratorGetNextOp : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    auto it = LookupIterator(ctx);
    TW_OP_REQUIRES_OK_ASYNC(ctx, it.status(), done);
    // The callback holds no reference to the resource: the last one dropped on the
    // resource's own thread would make it join itself. A resource destroyed while the
    // request waits ends it (Cancelled); one being served finishes first.
    (*it)->GetNext(ctx->cancellation_manager(), [ctx, done = std::move(done)](
                                                    StatusOr<Element> element) {
      if (!element.ok()) {
        ctx->SetStatus(element.status());
      } else if (static_cast<int>(element->size()) != ctx->num_outputs()) {
        ctx->SetStatus(errors::InvalidArgument("the iterator gave ", element->size(),
                                               " components, the op expects ", ctx->num_outputs()));
      } else {
        for (size_t i = 0; i < element->size(); ++i) {
          ctx->set_output(static_cast<int>(i), std::move((*element)[i]));
        }
      }
      done();
    });
  }
};
TW_REGISTER_KERNEL("IteratorGetNext", "CPU", IteratorGetNextOp);

TW_NO_GRADIENT("IteratorGetNext");

// ---- Checkpoints: an iterator's state as a string (iterator_resource.h) ----

TW_REGISTER_OP("SerializeIterator")
    .Input("resource_handle: resource")
    .Output("serialized: string")
    .SetIsStateful()
    .Doc("The iterator's state: its pipeline, inputs and position.");

class SerializeIteratorOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    auto it = LookupIterator(ctx);
    TW_OP_REQUIRES_OK(ctx, it.status());
    auto state = (*it)->SaveState();
    TW_OP_REQUIRES_OK(ctx, state.status());
    ctx->set_output(0, Tensor::Scalar(*std::move(state)));
  }
};
TW_REGISTER_KERNEL("SerializeIterator", "CPU", SerializeIteratorOp);

TW_REGISTER_OP("DeserializeIterator")
    .Input("resource_handle: resource")
    .Input("serialized: string")
    .SetIsStateful()
    .Doc("Puts the iterator where the state SerializeIterator gave left it.");

class DeserializeIteratorOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    auto it = LookupIterator(ctx);
    TW_OP_REQUIRES_OK(ctx, it.status());
    const Tensor& state = ctx->input(1);
    TW_OP_REQUIRES(
        ctx, state.dtype() == DT_STRING && state.num_elements() == 1,
        errors::InvalidArgument("node ", name(), ": serialized must be one string, got shape ",
                                state.shape().DebugString()));
    CancellationManager* cm = ctx->cancellation_manager();
    TW_OP_REQUIRES_OK(ctx,
                      (*it)->RestoreState(state.flat<std::string>()[0], ContextOf(ctx, nullptr),
                                          [cm] { return cm != nullptr && cm->IsCancelled(); }));
  }
};
TW_REGISTER_KERNEL("DeserializeIterator", "CPU", DeserializeIteratorOp);

TW_NO_GRADIENT("SerializeIterator");

// ---- String handles: an iterator named by a string a program can feed ----

TW_REGISTER_OP("IteratorToStringHandle")
    .Input("resource_handle: resource")
    .Output("string_handle: string")
    .SetIsStateful()
    .Doc("The iterator's handle as a string, for IteratorFromStringHandle.");

class IteratorToStringHandleOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    auto h = ValidateResourceHandle(*ctx, ctx->input(0), IteratorResource::kTypeName);
    TW_OP_REQUIRES_OK(ctx, h.status());
    proto::ResourceHandleProto p;
    p.set_device((*h)->device);
    p.set_container((*h)->container);
    p.set_name((*h)->name);
    p.set_type((*h)->type);
    ctx->set_output(0, Tensor::Scalar(p.SerializeAsString()));
  }
};
TW_REGISTER_KERNEL("IteratorToStringHandle", "CPU", IteratorToStringHandleOp);

TW_REGISTER_OP("IteratorFromStringHandle")
    .Input("string_handle: string")
    .Output("resource_handle: resource")
    .Attr("output_types: list(type) = []")
    .Attr("output_shapes: list(shape) = []")
    .SetIsStateful()
    .Doc("The iterator a string handle names (checked when it is used).");

class IteratorFromStringHandleOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    TW_OP_REQUIRES(ctx, in.num_elements() == 1 && in.rank() == 0,
                   errors::InvalidArgument("string_handle must be a scalar, got shape ",
                                           in.shape().DebugString()));
    proto::ResourceHandleProto p;
    // A handle is data a client can forge: whatever it names is checked by the op that
    // uses it (LookupResource: kind, device, existence), as any resource handle.
    TW_OP_REQUIRES(
        ctx, p.ParseFromString(in.scalar<std::string>()) && p.type() == IteratorResource::kTypeName,
        errors::InvalidArgument("Could not parse string_handle as a valid iterator "
                                "handle"));
    ctx->set_output(0,
                    Tensor::Scalar(ResourceHandle{p.device(), p.container(), p.name(), p.type()}));
  }
};
TW_REGISTER_KERNEL("IteratorFromStringHandle", "CPU", IteratorFromStringHandleOp);

}  // namespace
}  // namespace tw::data

namespace tw::ops {

Output SerializeIterator(const Scope& scope, Input iterator) {
  return scope.AddNodeOutput("SerializeIterator", {{std::move(iterator)}});
}

Operation DeserializeIterator(const Scope& scope, Input iterator, Input state) {
  return scope.AddNode("DeserializeIterator", {{std::move(iterator)}, {std::move(state)}});
}

}  // namespace tw::ops
