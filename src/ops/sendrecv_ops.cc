// _Send and _Recv: how a tensor crosses from one partition of a graph to another. The
// partitioner adds them in pairs that agree on (send device, its incarnation, recv device,
// tensor name), which make the rendezvous key.
#include "src/framework/op_kernel.h"
#include "src/framework/rendezvous.h"

namespace tw {
namespace {

TW_REGISTER_OP("_Send")
    .Input("tensor: T")
    .Attr("T: type")
    .Attr("tensor_name: string")
    .Attr("send_device: string")
    .Attr("send_device_incarnation: int")
    .Attr("recv_device: string")
    .Attr("client_terminated: bool = false")
    .Attr("push: bool = false")
    .SetIsStateful()
    .Doc(
        "Leaves its input in the step's rendezvous for the matching _Recv. A push _Send's "
        "value goes to the receiving task with its worker's pull from that task, instead of "
        "being pulled by it.");

// The rendezvous key of a _Send or _Recv node, from its attributes.
Status KeyFromAttrs(OpKernelConstruction* c, std::string* key) {
  std::string tensor_name, send_device, recv_device;
  int64_t incarnation = 0;
  TW_RETURN_IF_ERROR(c->GetAttr("tensor_name", &tensor_name));
  TW_RETURN_IF_ERROR(c->GetAttr("send_device", &send_device));
  TW_RETURN_IF_ERROR(c->GetAttr("recv_device", &recv_device));
  TW_RETURN_IF_ERROR(c->GetAttr("send_device_incarnation", &incarnation));
  *key = RendezvousKey(send_device, static_cast<uint64_t>(incarnation), recv_device, tensor_name);
  return OkStatus();
}

class SendOp : public OpKernel {
 public:
  explicit SendOp(OpKernelConstruction* c) : OpKernel(c) { c->SetStatus(KeyFromAttrs(c, &key_)); }
  void Compute(OpKernelContext* ctx) override {
    TW_OP_REQUIRES(ctx, ctx->rendezvous() != nullptr,
                   errors::Internal("_Send ", name(), " runs without a rendezvous"));
    TW_OP_REQUIRES_OK(ctx, ctx->rendezvous()->Send(key_, ctx->input(0)));
  }

 private:
  std::string key_;
};
TW_REGISTER_KERNEL("_Send", "CPU", SendOp);

TW_REGISTER_OP("_Recv")
    .Output("tensor: tensor_type")
    .Attr("tensor_type: type")
    .Attr("tensor_name: string")
    .Attr("send_device: string")
    .Attr("send_device_incarnation: int")
    .Attr("recv_device: string")
    .Attr("client_terminated: bool = false")
    .Attr("prefetch: bool = false")
    .Attr("pushed: bool = false")
    .SetIsStateful()
    .Doc(
        "Waits for the matching _Send's tensor; never holds a thread while waiting. A "
        "client-terminated _Recv reads a value the client fed into this task's rendezvous; "
        "a prefetch _Recv one its worker pulled with others as the step started, or (also "
        "pushed) one the sending task pushed with its own pull.");

class RecvOp : public AsyncOpKernel {
 public:
  explicit RecvOp(OpKernelConstruction* c) : AsyncOpKernel(c) {
    Status s = KeyFromAttrs(c, &key_);
    bool client_terminated = false, prefetch = false;
    if (s.ok()) s = c->GetAttr("client_terminated", &client_terminated);
    if (s.ok()) s = c->GetAttr("prefetch", &prefetch);
    local_ = client_terminated || prefetch;
    c->SetStatus(s);
  }
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    TW_OP_REQUIRES_ASYNC(ctx, ctx->rendezvous() != nullptr,
                         errors::Internal("_Recv ", name(), " runs without a rendezvous"), done);
    auto on_value = [ctx, done = std::move(done)](const Status& s, const Tensor& value) {
      if (s.ok()) {
        ctx->set_output(0, value);
      } else {
        ctx->SetStatus(s);
      }
      done();
    };
    if (local_) {
      ctx->rendezvous()->RecvLocalAsync(key_, ctx->cancellation_manager(), std::move(on_value));
    } else {
      ctx->rendezvous()->RecvAsync(key_, ctx->cancellation_manager(), std::move(on_value));
    }
  }

 private:
  std::string key_;
  bool local_ = false;  // the value is put into this task's rendezvous, not pulled by _Recv
};
TW_REGISTER_KERNEL("_Recv", "CPU", RecvOp);

}  // namespace
}  // namespace tw
