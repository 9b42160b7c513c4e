// Partitioning: splits a placed graph into one graph per device, joined by _Send/_Recv.
#ifndef TENSORWEAVE_SRC_GRAPH_PARTITION_H_
#define TENSORWEAVE_SRC_GRAPH_PARTITION_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "tensorweave/protobuf/graph.pb.h"
#include "tensorweave/status.h"

namespace tw {

struct PartitionOptions {
  // The incarnation of a device, written into _Send/_Recv so a restarted task's tensors
  // are never mistaken for its former self's.
  std::function<uint64_t(const std::string& device)> incarnation;
};

// Every node of `placed` must have a full device name. Each edge between devices becomes a
// _Send in the source's partition and a _Recv in the destination's, one pair per (source
// output, destination device), with tensor name "edge_<n>_<source node>". A control edge
// between devices becomes a _Send/_Recv of a dummy scalar and a control edge from the
// _Recv. A _Recv gets `prefetch` when its worker may pull its tensor together with the
// others from the same source device as the step starts (one RecvTensor call that answers
// when all are there): when the source produces it without needing anything the
// destination computes after receiving from the source. When two devices each prefetch a
// batch from the other, one of them may push its batch with its own pull instead (its
// _Send nodes get `push`, the other side's _Recv nodes `pushed`): a parameter server
// sends the weights with its request for the gradients, one call per step instead of two.
// It does so only when its batch needs nothing of the other one. Returns device -> its
// partition.
StatusOr<std::map<std::string, proto::GraphDef>> PartitionGraph(const proto::GraphDef& placed,
                                                                const PartitionOptions& options);

}  // namespace tw

#endif  // TENSORWEAVE_SRC_GRAPH_PARTITION_H_
