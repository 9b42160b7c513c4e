// The calls that carry tensors, as the master, the workers and the transports see them.
// Tensors stay Tensors here (shared buffers, never copied into protobuf strings); the gRPC
// layer writes their bytes straight from the tensor's memory (src/rpc/tensor_wire.h).
// The proto parts carry everything else; their repeated tensor fields are left empty.
#ifndef TENSORWEAVE_SRC_DISTRIBUTED_MESSAGES_H_
#define TENSORWEAVE_SRC_DISTRIBUTED_MESSAGES_H_

#include <string>
#include <vector>

#include "tensorweave/protobuf/master.pb.h"
#include "tensorweave/protobuf/worker.pb.h"
#include "tensorweave/tensor.h"

namespace tw {

struct NamedTensor {
  std::string name;
  Tensor tensor;
};

// Runs one registered partition for one step. `send` feeds its client-terminated _Recv
// nodes (rendezvous keys); `proto.send` is unused.
struct RunGraphArgs {
  proto::RunGraphRequest proto;
  std::vector<NamedTensor> send;
  // A step of a session in this process (see RunStepArgs): the partition's kernels may
  // touch any file, as the program itself may. Never on the wire: the gRPC layer neither
  // encodes nor decodes it, so a remote client cannot set it.
  bool from_this_process = false;
};
// The values of `proto.recv_key`, in that order.
struct RunGraphResult {
  std::vector<NamedTensor> recv;
};

// Asks for the values of `proto.rendezvous_key` of a step and delivers `push` (rendezvous
// keys and values the caller sends to that step) to it first; `proto.push` is unused.
struct RecvTensorArgs {
  proto::RecvTensorRequest proto;
  std::vector<NamedTensor> push;
};
// The values of the request's rendezvous keys, in that order.
struct RecvTensorResult {
  std::vector<NamedTensor> tensor;
};

// One step of a master session; `feed` names are "node:k", `proto.feed` is unused.
struct RunStepArgs {
  proto::RunStepRequest proto;
  std::vector<NamedTensor> feed;
  // Set by a session in the master's own process (its LocalMaster call, which skips
  // gRPC): the step comes from the program itself. The master passes it on to every
  // partition; those that reach their task over the network lose it there.
  bool from_this_process = false;
};
// One tensor per fetch, in order, named by the fetch.
struct RunStepResult {
  std::vector<NamedTensor> tensor;
};

}  // namespace tw

#endif  // TENSORWEAVE_SRC_DISTRIBUTED_MESSAGES_H_
