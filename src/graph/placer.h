// Placement: gives every node of a graph one concrete device.
#ifndef TENSORWEAVE_SRC_GRAPH_PLACER_H_
#define TENSORWEAVE_SRC_GRAPH_PLACER_H_

#include <string>
#include <vector>

#include "tensorweave/protobuf/graph.pb.h"
#include "tensorweave/status.h"

namespace tw {

// Sets each node's device to one of `devices` (full names):
//  - nodes are grouped with the nodes they must run beside: a "_class" attribute
//    "loc:@other" and any DT_RESOURCE input join the group of that node (a "_class" naming
//    a node absent from `graph`, pruned from the step, is ignored);
//  - a node without inputs or a device of its own (a constant, a feed) whose consumers are
//    all in one group joins that group, so its value never crosses tasks;
//  - a group's requested devices are merged (partial specs like "/job:ps" or "/task:1");
//    conflicting requests are InvalidArgument naming both nodes;
//  - the group goes to `default_device` when it satisfies the request (an unplaced node
//    runs on the master's task), else to the first satisfying device in `devices` order;
//  - no satisfying device is InvalidArgument naming the node, its request and the devices.
// `graph` must be valid (Graph::Create succeeds).
Status PlaceGraph(const std::vector<std::string>& devices, const std::string& default_device,
                  proto::GraphDef* graph);

}  // namespace tw

#endif  // TENSORWEAVE_SRC_GRAPH_PLACER_H_
