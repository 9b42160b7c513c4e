// Feeds and fetches of a distributed step: the _Arg and _Retval nodes of a pruned, placed
// step graph become client-terminated _Recv and _Send nodes, whose values travel in the
// RunGraph request (feeds) and response (fetches) of the task that holds them, so a fetch
// of a tensor on another task costs that task's RunGraph reply and no extra round trip.
#ifndef TENSORWEAVE_SRC_DISTRIBUTED_CLIENT_TERMINATED_H_
#define TENSORWEAVE_SRC_DISTRIBUTED_CLIENT_TERMINATED_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tensorweave/protobuf/graph.pb.h"
#include "tensorweave/status.h"

namespace tw {

struct ClientTerminatedKeys {
  // Per feed: the task (device) whose RunGraph carries it, and its rendezvous key.
  std::vector<std::string> feed_devices, feed_keys;
  // Per fetch: the device whose RunGraph reply carries it, and its rendezvous key.
  std::vector<std::string> fetch_devices, fetch_keys;
};

// Rewrites `graph` (the output of PruneForStep, then PlaceGraph) in place. `client_device`
// names the client end of the keys; `incarnation` gives each device's incarnation.
StatusOr<ClientTerminatedKeys> MakeClientTerminated(
    const std::vector<std::string>& feeds, const std::vector<std::string>& fetches,
    const std::string& client_device,
    const std::function<uint64_t(const std::string&)>& incarnation, proto::GraphDef* graph);

// Whether `node` is a client-terminated _Send or _Recv (its value rides a RunGraph message).
bool IsClientTerminated(const proto::NodeDef& node);
// How many tensors a partition sends to other tasks for them to pull (its _Send nodes that
// are neither client-terminated nor pushed): its step outlives its RunGraph until peers
// have pulled them all with RecvTensor.
int PeerSends(const proto::GraphDef& partition);

}  // namespace tw

#endif  // TENSORWEAVE_SRC_DISTRIBUTED_CLIENT_TERMINATED_H_
