#include "src/distributed/client_terminated.h"

#include "src/framework/attr_value.h"
#include "src/framework/rendezvous.h"

namespace tw {

namespace {

// A bool attribute of a _Send/_Recv (absent: its default, false).
bool Flag(const proto::NodeDef& node, const std::string& name) {
  auto it = node.attr().find(name);
  return it != node.attr().end() && it->second.b();
}

}  // namespace

bool IsClientTerminated(const proto::NodeDef& node) { return Flag(node, "client_terminated"); }

int PeerSends(const proto::GraphDef& partition) {
  int n = 0;
  for (const proto::NodeDef& node : partition.node()) {
    n += node.op() == "_Send" && !IsClientTerminated(node) && !Flag(node, "push");
  }
  return n;
}

StatusOr<ClientTerminatedKeys> MakeClientTerminated(
    const std::vector<std::string>& feeds, const std::vector<std::string>& fetches,
    const std::string& client_device,
    const std::function<uint64_t(const std::string&)>& incarnation, proto::GraphDef* graph) {
  ClientTerminatedKeys keys;
  keys.feed_devices.resize(feeds.size());
  keys.feed_keys.resize(feeds.size());
  keys.fetch_devices.resize(fetches.size());
  keys.fetch_keys.resize(fetches.size());
  for (proto::NodeDef& n : *graph->mutable_node()) {
    if (n.op() != "_Arg" && n.op() != "_Retval") continue;
    int64_t index = 0;
    DataType type = DT_INVALID;
    TW_RETURN_IF_ERROR(GetNodeAttr(n, "index", &index));
    TW_RETURN_IF_ERROR(GetNodeAttr(n, "T", &type));
    const bool is_feed = n.op() == "_Arg";
    const std::vector<std::string>& names = is_feed ? feeds : fetches;
    if (index < 0 || index >= static_cast<int64_t>(names.size())) {
      return errors::Internal("node ", n.name(), " has index ", index, " of ", names.size());
    }
    const std::string device = n.device();
    const std::string send_device = is_feed ? client_device : device;
    const std::string recv_device = is_feed ? device : client_device;
    const uint64_t send_incarnation = is_feed ? 0 : incarnation(device);
    const std::string key = RendezvousKey(send_device, send_incarnation, recv_device, names[index]);
    (is_feed ? keys.feed_devices : keys.fetch_devices)[index] = device;
    (is_feed ? keys.feed_keys : keys.fetch_keys)[index] = key;
    n.set_op(is_feed ? "_Recv" : "_Send");
    auto& attr = *n.mutable_attr();
    attr.erase("index");
    if (is_feed) {
      attr.erase("T");
      attr["tensor_type"] = MakeAttr(type);
    }
    attr["tensor_name"] = MakeAttr(names[index]);
    attr["send_device"] = MakeAttr(send_device);
    attr["send_device_incarnation"] = MakeAttr(static_cast<int64_t>(send_incarnation));
    attr["recv_device"] = MakeAttr(recv_device);
    attr["client_terminated"] = MakeAttr(true);
  }
  return keys;
}

}  // namespace tw
