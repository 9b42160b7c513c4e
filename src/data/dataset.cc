#include "src/data/dataset.h"

#include "absl/synchronization/mutex.h"

namespace tw::data {
namespace {

std::map<std::string, DatasetFactory>& Registry() {
  static auto* registry = new std::map<std::string, DatasetFactory>();
  return *registry;
}

}  // namespace

internal::DatasetRegistrar::DatasetRegistrar(const std::string& op, DatasetFactory factory) {
  Registry()[op] = std::move(factory);
}

StatusOr<std::shared_ptr<const DatasetBase>> OnlyChild(
    const proto::DatasetDef& def, const std::vector<std::shared_ptr<const DatasetBase>>& children) {
  if (children.size() != 1) {
    return errors::InvalidArgument("dataset ", def.op(), " needs one input dataset, got ",
                                   children.size());
  }
  return children[0];
}

uint64_t UnseededSeed(const BuildContext& ctx) {
  if (ctx.seeds != nullptr) return ctx.seeds->Next();
  std::random_device entropy;
  return (static_cast<uint64_t>(entropy()) << 32) | entropy();
}

StatusOr<Tensor> DatasetInput(const proto::DatasetDef& def, const BuildContext& ctx, int i) {
  if (i < 0 || i >= def.inputs_size()) {
    return errors::InvalidArgument("dataset ", def.op(), " needs input ", i, " but has ",
                                   def.inputs_size());
  }
  const int at = def.inputs(i);
  if (ctx.inputs == nullptr || at < 0 || at >= static_cast<int>(ctx.inputs->size())) {
    return errors::InvalidArgument("dataset ", def.op(), " reads input ", at,
                                   " of the iterator op, which has ",
                                   ctx.inputs == nullptr ? 0 : ctx.inputs->size());
  }
  return (*ctx.inputs)[at];
}

StatusOr<int64_t> IntParam(const proto::DatasetDef& def, const BuildContext& ctx,
                           const std::string& name) {
  auto at = def.attrs().find(name + "_input");
  if (at == def.attrs().end()) {
    int64_t v = 0;
    TW_RETURN_IF_ERROR(GetDatasetAttr(def, name, &v));
    return v;
  }
  TW_ASSIGN_OR_RETURN(Tensor t, DatasetInput(def, ctx, static_cast<int>(at->second.i())));
  if (t.rank() != 0 || (t.dtype() != DT_INT64 && t.dtype() != DT_INT32)) {
    return errors::InvalidArgument("dataset ", def.op(), ": ", name,
                                   " must be an int32 or int64 scalar, got ",
                                   DataTypeName(t.dtype()), " of shape ", t.shape().DebugString());
  }
  return t.dtype() == DT_INT64 ? t.scalar<int64_t>() : int64_t{t.scalar<int32_t>()};
}

StatusOr<std::shared_ptr<const DatasetBase>> BuildDataset(const proto::DatasetDef& def,
                                                          const BuildContext& ctx) {
  auto it = Registry().find(def.op());
  if (it == Registry().end()) {
    return errors::InvalidArgument("unknown dataset op \"", def.op(), "\"");
  }
  std::vector<std::shared_ptr<const DatasetBase>> children;
  for (const auto& child : def.children()) {
    TW_ASSIGN_OR_RETURN(auto built, BuildDataset(child, ctx));
    children.push_back(std::move(built));
  }
  return it->second(def, ctx, std::move(children));
}

}  // namespace tw::data
