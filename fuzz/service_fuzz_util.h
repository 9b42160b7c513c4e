// Helpers shared by the service fuzzers (worker_service_fuzz, master_service_fuzz): they turn
// fuzzer bytes into structured requests (graphs of registered ops with random attributes and
// inputs, tensors, rendezvous keys) and run asynchronous service calls with a bound on their
// time, so that one input never hangs the fuzzer and every call's `done` is checked to come
// exactly once.
#ifndef TENSORWEAVE_FUZZ_SERVICE_FUZZ_UTIL_H_
#define TENSORWEAVE_FUZZ_SERVICE_FUZZ_UTIL_H_

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "src/base/call_and_wait.h"  // CallAndWait, for the services' async calls
#include "src/distributed/worker_interface.h"
#include "src/runtime/cpu_device.h"
#include "tensorweave/protobuf/graph.pb.h"
#include "tensorweave/tensor.h"

namespace tw::fuzz {

// A device the generated graphs may name, with the incarnation a correct _Send/_Recv uses.
struct FuzzDevice {
  std::string name;  // "/job:ps/replica:0/task:0/device:CPU:0", or a partial spec
  uint64_t incarnation = 0;
};

struct GraphOptions {
  // The devices of the cluster: _Send/_Recv ends and forged resource handles name them.
  std::vector<FuzzDevice> devices;
  // Where nodes are placed (picked per node; "" and others are also picked now and then).
  std::vector<std::string> place_on;
  // A partition as a worker sees it (place_on[0] is its device): inputs come from feeds
  // (client-terminated _Recv) and from the other task, outputs go to fetches and to the
  // other task, and more _Send/_Recv nodes are made. A client's graph has none (they are
  // still generated, rarely, since a client may send anything).
  bool worker_partition = false;
  // Node names are `prefix` + index, so that graphs extending a session do not collide.
  std::string name_prefix = "n";
  int max_nodes = 10;
  // The directory checkpoint ops are confined to (their "directory" attribute and prefix).
  std::string checkpoint_dir;
  // Outputs of earlier graphs (ExtendSession) the new nodes may read: "node:k" and type.
  std::vector<std::pair<std::string, DataType>> existing_outputs;
};

// A generated graph and what a caller needs to drive it.
struct FuzzGraph {
  proto::GraphDef graph;
  // Every output of every node, "node:k", with its type (as far as it could be told).
  std::vector<std::pair<std::string, DataType>> outputs;
  std::vector<std::string> node_names;
  // Rendezvous keys of the graph's _Recv nodes (to feed) and _Send nodes (to fetch), with
  // the type the node declares.
  std::vector<std::pair<std::string, DataType>> recv_keys, send_keys;
};

// Strings the generator draws names from, so that resources, handles and keys collide.
const std::vector<std::string>& SharedNames();
const std::vector<std::string>& Containers();

// A data type: mostly one the kernels take, now and then invalid.
DataType FuzzType(FuzzedDataProvider& fdp);
// A small random tensor of `dtype` (at most 4 dims of at most 3, so 81 elements). Resource
// tensors hold handles forged from `devices`, SharedNames() and resource kinds.
Tensor FuzzTensor(FuzzedDataProvider& fdp, DataType dtype, const std::vector<FuzzDevice>& devices);
// A string now drawn from `pool`, now made up.
std::string PickString(FuzzedDataProvider& fdp, const std::vector<std::string>& pool);

// A graph of registered ops: attributes set from their definitions (now and then missing or
// of the wrong kind), inputs wired to earlier outputs of the right type (now and then of a
// wrong type or dangling), resource inputs wired to any resource (a queue into AssignAdd),
// forged resource constants, control edges, placement from `options.devices`.
FuzzGraph FuzzGraphDef(FuzzedDataProvider& fdp, const GraphOptions& options);

// Tracks the asynchronous calls of one fuzz input. Thread-safe.
class CallTracker {
 public:
  // A `done` for a call named `what`: aborts when called twice. `then` (may be empty) runs
  // inside it, first.
  std::function<void(const Status&)> Done(std::string what,
                                          std::function<void(const Status&)> then = {});
  // Waits up to `timeout` for every call so far to complete; false when some did not.
  bool WaitAll(absl::Duration timeout);
  // Aborts naming the calls still outstanding after `timeout`: a call that does not end
  // once its step is cleaned up and its cancellation fired is a hang.
  void WaitAllOrDie(absl::Duration timeout);

 private:
  absl::Mutex mu_;
  int64_t next_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<int64_t, std::string> outstanding_ ABSL_GUARDED_BY(mu_);
};

// With TW_FUZZ_VERBOSE set in the environment: prints a call and its outcome (for reading
// what a reproducer does).
void Note(const std::string& what, const Status& s);

// A worker cache over in-process workers; tasks not in `workers` are NotFound.
class MapWorkerCache : public WorkerCache {
 public:
  StatusOr<WorkerInterface*> GetWorker(const std::string& task) override;
  std::map<std::string, WorkerInterface*> workers;
};

// A fresh directory under $TMPDIR for the checkpoint ops of this process.
std::string MakeScratchDir();

// What both service fuzzers keep for the whole process: the devices of ps:0 and worker:0
// (2 threads each; their checkpoint ops may write in a scratch directory only), made once
// because a device's thread pool is costly to start for every input.
struct FuzzEnv {
  std::vector<std::unique_ptr<CpuDevice>> devices;  // ps:0, worker:0
  std::vector<FuzzDevice> fuzz_devices;
  std::string dir;
  // Aborts when the devices cannot be made (the fuzzer cannot run at all then).
  static FuzzEnv* Create();
  // Forgets every variable and queue an input left on the devices.
  void ClearResources();
};

}  // namespace tw::fuzz

#endif  // TENSORWEAVE_FUZZ_SERVICE_FUZZ_UTIL_H_
