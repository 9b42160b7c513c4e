#include "fuzz/service_fuzz_util.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>

#include "src/base/timer_queue.h"
#include "src/core/tensor_coding.h"
#include "src/framework/attr_value.h"
#include "src/framework/file_access.h"
#include "src/framework/op_def.h"
#include "src/framework/rendezvous.h"
#include "tensorweave/device_name.h"

namespace tw::fuzz {
namespace {

constexpr DataType kKernelTypes[] = {DT_FLOAT, DT_DOUBLE, DT_INT32,  DT_INT64,
                                     DT_UINT8, DT_BOOL,   DT_STRING, DT_RESOURCE};

// Ops the generator never builds: test-only ops of other binaries (not registered here
// anyway) and nothing else; the checkpoint ops are built, confined to a scratch directory.
bool Skipped(const std::string& op) { return op.starts_with("Test"); }

const std::vector<std::string>& OpNames() {
  static const auto* names = [] {
    auto* v = new std::vector<std::string>();
    for (const std::string& op : OpRegistry::Global().ListOps()) {
      if (!Skipped(op)) v->push_back(op);
    }
    std::sort(v->begin(), v->end());
    return v;
  }();
  return *names;
}

template <typename T>
const T& Pick(FuzzedDataProvider& fdp, const std::vector<T>& v) {
  return v[fdp.ConsumeIntegralInRange<size_t>(0, v.size() - 1)];
}

// True about one time in `n`.
bool OneIn(FuzzedDataProvider& fdp, int n) { return fdp.ConsumeIntegralInRange(0, n - 1) == 0; }

// Whether the graph being generated is a hostile one: a quarter of them carry deliberate
// flaws (missing or ill-kinded attributes, dangling inputs, cycles, bad placement, huge
// dimensions); the others are meant to be valid, so that their steps run far enough to
// reach the kernels. Set by FuzzGraphDef; the generator runs on one thread.
bool hostile = false;

// A deliberate flaw, about one time in `n`, in hostile graphs only.
bool Flaw(FuzzedDataProvider& fdp, int n) { return hostile && OneIn(fdp, n); }

int64_t FuzzInt(FuzzedDataProvider& fdp, int64_t lo, int64_t hi) {
  if (Flaw(fdp, 16)) {
    switch (fdp.ConsumeIntegralInRange(0, 3)) {
      case 0:
        return std::numeric_limits<int64_t>::max();
      case 1:
        return std::numeric_limits<int64_t>::min();
      case 2:
        return std::numeric_limits<int32_t>::max() + int64_t{1};
      default:
        return -1;
    }
  }
  return fdp.ConsumeIntegralInRange<int64_t>(lo, hi);
}

// Dimensions of a shape attribute (-1 unknown, now and then huge or negative), or of a
// tensor the fuzzer fills (`tensor`: 0 to 3 each).
std::vector<int64_t> FuzzDims(FuzzedDataProvider& fdp, bool tensor) {
  std::vector<int64_t> dims(fdp.ConsumeIntegralInRange<size_t>(0, tensor ? 4 : 3));
  for (int64_t& d : dims) {
    d = fdp.ConsumeIntegralInRange<int64_t>(tensor ? 0 : -1, 3);
    if (!tensor && Flaw(fdp, 64)) d = FuzzInt(fdp, -2, 3);
  }
  return dims;
}

proto::TensorShapeProto FuzzShapeProto(FuzzedDataProvider& fdp) {
  proto::TensorShapeProto shape;
  if (OneIn(fdp, 3)) {
    shape.set_unknown_rank(true);
    return shape;
  }
  for (int64_t d : FuzzDims(fdp, /*tensor=*/false)) shape.add_dim(d);
  return shape;
}

ResourceHandle FuzzHandle(FuzzedDataProvider& fdp, const std::vector<FuzzDevice>& devices) {
  static const std::vector<std::string> kKinds = {"Variable", "FIFOQueue", "ConditionalAccumulator",
                                                  "", "Bogus"};
  ResourceHandle h;
  h.device = devices.empty() || Flaw(fdp, 8) ? PickString(fdp, {"", "/job:nope/task:0"})
                                             : Pick(fdp, devices).name;
  h.container = PickString(fdp, Containers());
  h.name = PickString(fdp, SharedNames());
  h.type = PickString(fdp, kKinds);
  return h;
}

// Attribute value of the kind `def.kind`, or now and then of another kind.
proto::AttrValue FuzzAttr(FuzzedDataProvider& fdp, const OpDef& op, const AttrDef& def,
                          const proto::NodeDef& node, const GraphOptions& options) {
  std::string kind = def.kind;
  if (Flaw(fdp, 16)) {
    static const std::vector<std::string> kKinds = {"int",  "float", "bool",       "string",
                                                    "type", "shape", "list(type)", "list(int)"};
    kind = Pick(fdp, kKinds);
  }
  const std::string& name = def.name;
  if (kind == "type") {
    if (!def.allowed_types.empty() && !Flaw(fdp, 8)) {
      return MakeAttr(Pick(fdp, def.allowed_types));
    }
    return MakeAttr(FuzzType(fdp));
  }
  if (kind == "list(type)") {
    // At least the minimum the attribute asks for (a list(int) such as a pool's ksize has
    // a minimum of 4, and a flaw may have turned it into this kind).
    const auto least = static_cast<size_t>(std::max<int64_t>(def.minimum.value_or(0), 0));
    std::vector<DataType> types(
        fdp.ConsumeIntegralInRange<size_t>(least, std::max<size_t>(least, 3)));
    for (DataType& t : types) t = OneIn(fdp, 2) ? DT_FLOAT : FuzzType(fdp);
    return MakeAttr(types);
  }
  if (kind == "int") {
    // Counts of list arguments and indexes stay small so that graphs stay small.
    bool is_count = false;
    for (const auto& args : {op.inputs, op.outputs}) {
      for (const ArgDef& a : args) is_count |= a.number_attr == name;
    }
    if (name == "send_device_incarnation") {
      const std::string& send =
          node.attr().count("send_device") ? node.attr().at("send_device").s() : std::string();
      for (const FuzzDevice& d : options.devices) {
        if (d.name == send && !Flaw(fdp, 4)) return MakeAttr(static_cast<int64_t>(d.incarnation));
      }
      return MakeAttr(FuzzInt(fdp, 0, 3));
    }
    if (is_count) return MakeAttr(FuzzInt(fdp, 0, 3));
    return MakeAttr(FuzzInt(fdp, -2, 4));
  }
  if (kind == "float") {
    if (OneIn(fdp, 16)) {
      return MakeAttr(OneIn(fdp, 2) ? std::numeric_limits<float>::quiet_NaN()
                                    : std::numeric_limits<float>::infinity());
    }
    return MakeAttr(static_cast<float>(fdp.ConsumeIntegralInRange(-4, 4)) / 2);
  }
  if (kind == "bool") {
    // The _Send/_Recv flags are mostly off: a partition as the partitioner writes it.
    if (name == "push" || name == "pushed" || name == "prefetch" || name == "client_terminated") {
      return MakeAttr(OneIn(fdp, 4));
    }
    return MakeAttr(fdp.ConsumeBool());
  }
  if (kind == "string") {
    if (name == "directory") return MakeAttr(options.checkpoint_dir);
    if (name == "container") return MakeAttr(PickString(fdp, Containers()));
    if (name == "shared_name") return MakeAttr(PickString(fdp, SharedNames()));
    if (name == "reduction_type") return MakeAttr(PickString(fdp, {"MEAN", "SUM"}));
    if (name == "tensor_name") return MakeAttr(PickString(fdp, {"t0", "t1", "n0:0", "n1:0"}));
    if (name == "send_device" || name == "recv_device") {
      if (options.devices.empty() || Flaw(fdp, 16)) return MakeAttr(PickString(fdp, {""}));
      return MakeAttr(Pick(fdp, options.devices).name);
    }
    return MakeAttr(fdp.ConsumeRandomLengthString(8));
  }
  if (kind == "shape")
    return [&] {
      proto::AttrValue v;
      *v.mutable_shape() = FuzzShapeProto(fdp);
      return v;
    }();
  if (kind == "tensor") {
    DataType dtype = FuzzType(fdp);
    auto it = node.attr().find("dtype");
    if (it != node.attr().end() && it->second.value_case() == proto::AttrValue::kType &&
        !Flaw(fdp, 8)) {
      dtype = static_cast<DataType>(it->second.type());
    }
    // A checkpoint's variable names: one string per variable input.
    if (name == "names" && !Flaw(fdp, 4)) {
      const int64_t n = node.attr().count("N") ? node.attr().at("N").i() : 1;
      std::vector<std::string> names;
      for (int64_t i = 0; i < std::clamp<int64_t>(n, 0, 4); ++i) {
        names.push_back(PickString(fdp, SharedNames()));
      }
      return MakeAttr(Tensor::FromVector(names));
    }
    if (!IsValidDataType(dtype)) dtype = DT_FLOAT;
    return MakeAttr(FuzzTensor(fdp, dtype, options.devices));
  }
  proto::AttrValue v;
  proto::AttrValue::ListValue* list = v.mutable_list();
  const size_t n = fdp.ConsumeIntegralInRange<size_t>(0, 3);
  for (size_t i = 0; i < n; ++i) {
    if (kind == "list(int)") {
      list->add_i(FuzzInt(fdp, -1, 3));
    } else if (kind == "list(shape)") {
      *list->add_shape() = FuzzShapeProto(fdp);
    } else {  // an unknown kind: an empty list
      break;
    }
  }
  return v;
}

// A Const or Placeholder of `dtype`, for an input no earlier node provides.
// The _Send or _Recv node of a rendezvous key, as the partitioner and MakeClientTerminated
// write them (src/graph/partition.cc, src/distributed/client_terminated.cc).
proto::NodeDef SendRecv(bool send, const std::string& name, DataType dtype, const FuzzDevice& src,
                        const std::string& dst, const std::string& tensor_name,
                        bool client_terminated) {
  proto::NodeDef n;
  n.set_name(name);
  n.set_op(send ? "_Send" : "_Recv");
  n.set_device(send ? src.name : dst);
  auto& attr = *n.mutable_attr();
  attr[send ? "T" : "tensor_type"] = MakeAttr(dtype);
  attr["tensor_name"] = MakeAttr(tensor_name);
  attr["send_device"] = MakeAttr(src.name);
  attr["send_device_incarnation"] = MakeAttr(static_cast<int64_t>(src.incarnation));
  attr["recv_device"] = MakeAttr(dst);
  if (client_terminated) attr["client_terminated"] = MakeAttr(true);
  return n;
}

// The device of a worker partition (its first placement) and another task's device.
const FuzzDevice* OwnDevice(const GraphOptions& options) {
  for (const FuzzDevice& d : options.devices) {
    if (!options.place_on.empty() && d.name == options.place_on[0]) return &d;
  }
  return nullptr;
}
const FuzzDevice* PeerDevice(const GraphOptions& options) {
  for (const FuzzDevice& d : options.devices) {
    if (options.place_on.empty() || d.name != options.place_on[0]) return &d;
  }
  return nullptr;
}

// A node of `dtype` for an input no earlier node provides: a Const, a Placeholder, and in a
// worker partition also a feed (a client-terminated _Recv) or a tensor from the peer task.
proto::NodeDef Source(FuzzedDataProvider& fdp, const std::string& name, DataType dtype,
                      const GraphOptions& options) {
  const FuzzDevice* own = OwnDevice(options);
  const FuzzDevice* peer = PeerDevice(options);
  if (options.worker_partition && own != nullptr && peer != nullptr) {
    switch (fdp.ConsumeIntegralInRange(0, 7)) {
      case 0:
      case 1:  // a feed from the client, whose key has incarnation 0
        return SendRecv(false, name, dtype, {peer->name, 0}, own->name,
                        PickString(fdp, {"feed0", "feed1", "n0:0"}), true);
      case 2:  // a tensor the peer task's partition sends
        return SendRecv(false, name, dtype, *peer, own->name,
                        PickString(fdp, {"t0", "t1", "n0:0", "n1:0"}), false);
      case 3:
        if (!OneIn(fdp, 4)) break;
        [[fallthrough]];
      case 4: {
        proto::NodeDef n;
        n.set_name(name);
        n.set_op("Placeholder");
        (*n.mutable_attr())["dtype"] = MakeAttr(dtype);
        return n;
      }
      default:
        break;
    }
  } else if (OneIn(fdp, 4)) {
    proto::NodeDef n;
    n.set_name(name);
    n.set_op("Placeholder");
    (*n.mutable_attr())["dtype"] = MakeAttr(dtype);
    return n;
  }
  proto::NodeDef n;
  n.set_name(name);
  n.set_op("Const");
  (*n.mutable_attr())["dtype"] = MakeAttr(dtype);
  (*n.mutable_attr())["value"] =
      MakeAttr(FuzzTensor(fdp, IsValidDataType(dtype) ? dtype : DT_FLOAT, options.devices));
  return n;
}

// A node that makes a resource of a random kind.
proto::NodeDef NewResource(FuzzedDataProvider& fdp, const std::string& name,
                           const GraphOptions& options) {
  proto::NodeDef n;
  n.set_name(name);
  auto& attr = *n.mutable_attr();
  switch (fdp.ConsumeIntegralInRange(0, 2)) {
    case 0:
      n.set_op("Variable");
      attr["dtype"] = MakeAttr(OneIn(fdp, 2) ? DT_FLOAT : FuzzType(fdp));
      break;
    case 1:
      n.set_op("FIFOQueue");
      attr["component_types"] = MakeAttr(std::vector<DataType>{FuzzType(fdp)});
      attr["capacity"] = MakeAttr(FuzzInt(fdp, -1, 3));
      break;
    default:
      n.set_op("ConditionalAccumulator");
      attr["dtype"] = MakeAttr(OneIn(fdp, 2) ? DT_FLOAT : DT_DOUBLE);
      break;
  }
  if (fdp.ConsumeBool()) attr["shared_name"] = MakeAttr(PickString(fdp, SharedNames()));
  if (OneIn(fdp, 4)) attr["container"] = MakeAttr(PickString(fdp, Containers()));
  return n;
}

std::string PlaceOn(FuzzedDataProvider& fdp, const GraphOptions& options) {
  if (options.place_on.empty() || Flaw(fdp, 8)) {
    return PickString(fdp, {"", "/job:nope/task:0", "/device:CPU:0",
                            options.devices.empty() ? "" : Pick(fdp, options.devices).name});
  }
  return Pick(fdp, options.place_on);
}

}  // namespace

const std::vector<std::string>& SharedNames() {
  static const auto* names = new std::vector<std::string>{"", "v", "q", "n0", "n1", "n2", "e0"};
  return *names;
}

const std::vector<std::string>& Containers() {
  static const auto* names = new std::vector<std::string>{"", "", "c", "ps", "worker"};
  return *names;
}

std::string PickString(FuzzedDataProvider& fdp, const std::vector<std::string>& pool) {
  if (pool.empty() || OneIn(fdp, 16)) return fdp.ConsumeRandomLengthString(12);
  return Pick(fdp, pool);
}

DataType FuzzType(FuzzedDataProvider& fdp) {
  if (Flaw(fdp, 32)) return static_cast<DataType>(fdp.ConsumeIntegralInRange(0, 30));
  return kKernelTypes[fdp.ConsumeIntegralInRange<size_t>(0, std::size(kKernelTypes) - 1)];
}

Tensor FuzzTensor(FuzzedDataProvider& fdp, DataType dtype, const std::vector<FuzzDevice>& devices) {
  auto shape = TensorShape::Create(FuzzDims(fdp, /*tensor=*/true));
  if (!shape.ok()) shape = TensorShape();
  auto allocated = Tensor::Allocate(dtype, *shape);
  if (!allocated.ok()) return Tensor(DT_FLOAT, TensorShape());
  Tensor t = *std::move(allocated);
  const int64_t n = t.num_elements();
  for (int64_t i = 0; i < n; ++i) {
    // Small values: a Fill or a Reshape fed from them stays small.
    const int64_t v = fdp.ConsumeIntegralInRange<int64_t>(-2, 4);
    switch (dtype) {
      case DT_FLOAT:
        t.flat<float>()[i] = OneIn(fdp, 32) ? std::nanf("") : static_cast<float>(v) / 2;
        break;
      case DT_DOUBLE:
        t.flat<double>()[i] = static_cast<double>(v) / 2;
        break;
      case DT_INT32:
        t.flat<int32_t>()[i] = static_cast<int32_t>(v);
        break;
      case DT_INT64:
        t.flat<int64_t>()[i] = v;
        break;
      case DT_UINT8:
        t.flat<uint8_t>()[i] = static_cast<uint8_t>(v);
        break;
      case DT_BOOL:
        t.flat<bool>()[i] = v > 0;
        break;
      case DT_STRING:
        t.flat<std::string>()[i] = PickString(fdp, SharedNames());
        break;
      case DT_RESOURCE:
        t.flat<ResourceHandle>()[i] = FuzzHandle(fdp, devices);
        break;
      default:
        break;
    }
  }
  return t;
}

FuzzGraph FuzzGraphDef(FuzzedDataProvider& fdp, const GraphOptions& options) {
  FuzzGraph out;
  hostile = OneIn(fdp, 4);
  std::vector<std::pair<std::string, DataType>> available = options.existing_outputs;
  const int nodes = fdp.ConsumeIntegralInRange(1, options.max_nodes);
  int next_name = 0;
  auto new_name = [&] {
    if (Flaw(fdp, 32) && !out.node_names.empty()) return Pick(fdp, out.node_names);  // dup
    return options.name_prefix + std::to_string(next_name++);
  };
  auto add = [&](proto::NodeDef n) {
    out.node_names.push_back(n.name());
    // Its outputs as far as the definition tells them (none when its attributes are bad).
    auto def = OpRegistry::Global().LookUp(n.op());
    proto::NodeDef checked = n;
    std::vector<DataType> types;
    if (def.ok() && AddDefaultsAndValidateAttrs(**def, &checked).ok() &&
        ArgTypesForNode(**def, checked, /*outputs=*/true, &types).ok()) {
      for (size_t k = 0; k < types.size(); ++k) {
        available.emplace_back(n.name() + ":" + std::to_string(k), types[k]);
        out.outputs.emplace_back(n.name() + ":" + std::to_string(k), types[k]);
      }
    }
    if (n.op() == "_Send" || n.op() == "_Recv") {
      auto attr = [&](const char* a) -> const proto::AttrValue* {
        auto it = checked.attr().find(a);
        return it == checked.attr().end() ? nullptr : &it->second;
      };
      const auto *send = attr("send_device"), *recv = attr("recv_device"),
                 *inc = attr("send_device_incarnation"), *tensor = attr("tensor_name"),
                 *type = attr(n.op() == "_Send" ? "T" : "tensor_type");
      if (send && recv && inc && tensor && type) {
        (n.op() == "_Send" ? out.send_keys : out.recv_keys)
            .emplace_back(
                RendezvousKey(send->s(), static_cast<uint64_t>(inc->i()), recv->s(), tensor->s()),
                static_cast<DataType>(type->type()));
      }
    }
    *out.graph.add_node() = std::move(n);
  };
  // An input of `dtype`: an earlier output of that type, else a new source node; now and
  // then anything at all, or a name that is nowhere.
  auto input_of = [&](DataType dtype, const std::string& device) -> std::string {
    if (Flaw(fdp, 16)) return PickString(fdp, {"nowhere", "n0:9", "n0:-1", "^n0", ":0"});
    std::vector<const std::string*> matching;
    for (const auto& [name, t] : available) {
      if (t == dtype) matching.push_back(&name);
    }
    if (!available.empty() && Flaw(fdp, 12)) return Pick(fdp, available).first;
    // Mostly reuse what exists (resources especially, so that kernels share them).
    if (!matching.empty() && (dtype == DT_RESOURCE ? !OneIn(fdp, 4) : fdp.ConsumeBool())) {
      return *Pick(fdp, matching);
    }
    // A resource input gets a new resource of any kind half the time (a queue for a
    // variable's update), else a forged handle.
    proto::NodeDef src = dtype == DT_RESOURCE && fdp.ConsumeBool()
                             ? NewResource(fdp, new_name(), options)
                             : Source(fdp, new_name(), dtype, options);
    src.set_device(OneIn(fdp, 4) ? PlaceOn(fdp, options) : device);
    const std::string name = src.name() + ":0";
    add(std::move(src));
    return name;
  };

  for (int i = 0; i < nodes && fdp.remaining_bytes() > 0; ++i) {
    std::string op = Pick(fdp, OpNames());
    // Partitions get more _Send/_Recv nodes of their own making (and their flaws).
    if (options.worker_partition && OneIn(fdp, 8)) op = fdp.ConsumeBool() ? "_Send" : "_Recv";
    const bool sendrecv = op == "_Send" || op == "_Recv";
    if (sendrecv && !options.worker_partition && !OneIn(fdp, 8)) op = "Identity";
    auto def_or = OpRegistry::Global().LookUp(op);
    if (!def_or.ok()) continue;
    const OpDef& def = **def_or;
    proto::NodeDef node;
    node.set_name(new_name());
    node.set_op(op);
    node.set_device(PlaceOn(fdp, options));
    // Type attributes first, so that tensors and counts can follow them; then the rest in
    // the definition's order (send_device before its incarnation).
    std::vector<const AttrDef*> order;
    for (const AttrDef& a : def.attrs) {
      if (a.kind == "type" || a.kind == "list(type)") order.push_back(&a);
    }
    for (const AttrDef& a : def.attrs) {
      if (a.kind != "type" && a.kind != "list(type)") order.push_back(&a);
    }
    for (const AttrDef* a : order) {
      // Attributes with defaults are often left out; any one now and then (a _Send
      // without its incarnation).
      if (a->default_value.has_value() && fdp.ConsumeBool()) continue;
      if (Flaw(fdp, sendrecv ? 4 : 16)) continue;
      (*node.mutable_attr())[a->name] = FuzzAttr(fdp, def, *a, node, options);
    }
    if (Flaw(fdp, 32)) (*node.mutable_attr())["bogus_attr"] = MakeAttr(int64_t{1});
    // Inputs: one per expanded input type when the attributes tell them.
    proto::NodeDef checked = node;
    std::vector<DataType> in_types;
    if (!AddDefaultsAndValidateAttrs(def, &checked).ok() ||
        !ArgTypesForNode(def, checked, /*outputs=*/false, &in_types).ok()) {
      in_types.assign(fdp.ConsumeIntegralInRange<size_t>(0, def.inputs.size()), DT_FLOAT);
    }
    if (in_types.size() > 8) in_types.resize(8);
    const bool checkpoint =
        op == "SaveVariables" || op == "RestoreVariables" || op == "MergeCheckpoint";
    for (size_t k = 0; k < in_types.size(); ++k) {
      if (checkpoint && k == 0) {
        // The prefix: inside the scratch directory, or one the kernel must refuse.
        proto::NodeDef prefix;
        prefix.set_name(new_name());
        prefix.set_op("Const");
        prefix.set_device(node.device());
        const std::string& dir = options.checkpoint_dir;
        const std::string path =
            PickString(fdp, {dir + "/ck", dir + "/ck", dir + "/sub/ck", dir + "/../ck", "ck", dir});
        (*prefix.mutable_attr())["dtype"] = MakeAttr(DT_STRING);
        (*prefix.mutable_attr())["value"] = MakeAttr(Tensor::Scalar(path));
        node.add_input(prefix.name());
        add(std::move(prefix));
        continue;
      }
      node.add_input(input_of(in_types[k], node.device()));
    }
    if (!out.node_names.empty() && OneIn(fdp, 8)) {
      node.add_input("^" + Pick(fdp, out.node_names));
    }
    if (Flaw(fdp, 32)) node.add_input("^" + node.name());  // a cycle
    add(std::move(node));
  }
  // A worker partition's ends: fetches for the client (client-terminated _Send) and
  // tensors for the peer task to pull.
  const FuzzDevice* own = OwnDevice(options);
  const FuzzDevice* peer = PeerDevice(options);
  if (options.worker_partition && own != nullptr && peer != nullptr) {
    const int sinks = fdp.ConsumeIntegralInRange(0, 2);
    for (int i = 0; i < sinks && !available.empty(); ++i) {
      const auto [input, dtype] = Pick(fdp, available);
      const bool client = fdp.ConsumeBool();
      proto::NodeDef n = SendRecv(
          true, new_name(), dtype, *own, peer->name,
          client ? PickString(fdp, {"fetch0", "fetch1"}) : PickString(fdp, {"t0", "t1", "n0:0"}),
          client);
      n.add_input(input);
      add(std::move(n));
    }
  }
  return out;
}

std::function<void(const Status&)> CallTracker::Done(std::string what,
                                                     std::function<void(const Status&)> then) {
  int64_t id;
  {
    absl::MutexLock lock(&mu_);
    id = next_++;
    outstanding_[id] = what;
  }
  if (std::getenv("TW_FUZZ_VERBOSE") != nullptr) {
    std::fprintf(stderr, "%s started\n", what.c_str());
  }
  auto called = std::make_shared<std::atomic<bool>>(false);
  return [this, id, called, what = std::move(what), then = std::move(then)](const Status& s) {
    if (called->exchange(true)) {
      std::fprintf(stderr, "%s: done called twice (second: %s)\n", what.c_str(),
                   s.ToString().c_str());
      std::abort();
    }
    Note(what, s);
    if (then) then(s);
    absl::MutexLock lock(&mu_);
    outstanding_.erase(id);
  };
}

bool CallTracker::WaitAll(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  return mu_.AwaitWithTimeout(
      absl::Condition(
          +[](std::map<int64_t, std::string>* m) { return m->empty(); }, &outstanding_),
      timeout);
}

void CallTracker::WaitAllOrDie(absl::Duration timeout) {
  if (WaitAll(timeout)) return;
  absl::MutexLock lock(&mu_);
  std::fprintf(stderr, "%zu calls did not end within %s after cleanup:\n", outstanding_.size(),
               absl::FormatDuration(timeout).c_str());
  for (const auto& [id, what] : outstanding_) std::fprintf(stderr, "  %s\n", what.c_str());
  std::abort();
}

void Note(const std::string& what, const Status& s) {
  static const bool verbose = std::getenv("TW_FUZZ_VERBOSE") != nullptr;
  if (verbose) std::fprintf(stderr, "%s -> %s\n", what.c_str(), s.ToString().c_str());
}

StatusOr<WorkerInterface*> MapWorkerCache::GetWorker(const std::string& task) {
  auto it = workers.find(task);
  if (it == workers.end()) return errors::NotFound("no task ", task);
  return it->second;
}

std::string MakeScratchDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = std::string(tmp != nullptr && tmp[0] == '/' ? tmp : "/tmp") + "/tw_fuzz_XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) {
    std::perror("mkdtemp");
    std::abort();
  }
  return dir;
}

FuzzEnv* FuzzEnv::Create() {
  auto* env = new FuzzEnv();
  env->dir = MakeScratchDir();
  for (const char* name :
       {"/job:ps/replica:0/task:0/device:CPU:0", "/job:worker/replica:0/task:0/device:CPU:0"}) {
    auto files = FileAccessPolicy::AllowDirectories({env->dir}, "fuzz");
    if (!files.ok()) std::abort();
    auto device = CpuDevice::Create(*DeviceName::Parse(name),
                                    {.num_threads = 2, .file_access = *std::move(files)});
    if (!device.ok()) std::abort();
    env->fuzz_devices.push_back({(*device)->name(), (*device)->incarnation()});
    env->devices.push_back(*std::move(device));
  }
  return env;
}

void FuzzEnv::ClearResources() {
  for (auto& d : devices) d->resource_manager()->Clear({});
}

}  // namespace tw::fuzz
