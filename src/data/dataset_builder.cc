// tensorweave/data.h: Datasets built in C++ as DatasetDef trees (the description the
// Python layer writes too), and the iterator ops over them (iterator_ops.cc).
#include <utility>

#include "src/framework/attr_value.h"
#include "tensorweave/data.h"
#include "tensorweave/ops/basic_ops.h"

namespace tw::data {
namespace {

using Shape = std::optional<TensorShape>;

Shape Known(std::vector<int64_t> dims) {
  auto shape = TensorShape::Create(dims);
  return shape.ok() ? Shape(*shape) : std::nullopt;
}

// `shape` with `dim` in front (a batch); unknown stays unknown.
Shape Prepend(int64_t dim, const Shape& shape) {
  if (!shape) return std::nullopt;
  std::vector<int64_t> dims = {dim};
  dims.insert(dims.end(), shape->dims().begin(), shape->dims().end());
  return Known(std::move(dims));
}

PartialShape ToPartial(const Shape& shape) {
  return shape ? PartialShape::Of(shape->dims()) : PartialShape::Unknown();
}

Tensor Strings(const std::vector<std::string>& values) {
  return Tensor::FromVector<std::string>(values);
}

}  // namespace

Dataset Dataset::TFRecord(const std::vector<std::string>& files,
                          const std::string& compression_type) {
  Dataset d;
  d.def_.set_op("TFRecord");
  d.def_.add_inputs(0);
  d.inputs_ = {Strings(files)};
  (*d.def_.mutable_attrs())["compression_type"] = MakeAttr(compression_type);
  (*d.def_.mutable_attrs())["buffer_size"] = MakeAttr(int64_t{0});
  d.types_ = {DT_STRING};
  d.shapes_ = {Known({})};
  return d;
}

Dataset Dataset::TextLine(const std::vector<std::string>& files) {
  Dataset d;
  d.def_.set_op("TextLine");
  d.def_.add_inputs(0);
  d.inputs_ = {Strings(files)};
  (*d.def_.mutable_attrs())["compression_type"] = MakeAttr(std::string());
  d.types_ = {DT_STRING};
  d.shapes_ = {Known({})};
  return d;
}

Dataset Dataset::Range(int64_t start, int64_t stop, int64_t step) {
  Dataset d;
  d.def_.set_op("Range");
  for (int i = 0; i < 3; ++i) d.def_.add_inputs(i);
  d.inputs_ = {Tensor::Scalar(start), Tensor::Scalar(stop), Tensor::Scalar(step)};
  d.types_ = {DT_INT64};
  d.shapes_ = {Known({})};
  return d;
}

Dataset Dataset::TensorSlices(const std::vector<Tensor>& components) {
  Dataset d;
  d.def_.set_op("TensorSlice");
  for (size_t i = 0; i < components.size(); ++i) {
    const Tensor& t = components[i];
    if (t.rank() == 0) {
      d.status_ = errors::InvalidArgument("Dataset::TensorSlices: component ", i,
                                          " is a scalar; slices need rank >= 1");
    }
    d.def_.add_inputs(static_cast<int>(i));
    d.inputs_.push_back(t);
    d.types_.push_back(t.dtype());
    std::vector<int64_t> row(t.shape().dims().begin() + (t.rank() > 0 ? 1 : 0),
                             t.shape().dims().end());
    d.shapes_.push_back(Known(std::move(row)));
  }
  if (components.empty())
    d.status_ = errors::InvalidArgument("Dataset::TensorSlices: no components");
  return d;
}

Dataset Dataset::Transformed(const std::string& op) const {
  Dataset d = *this;
  d.def_.Clear();
  d.def_.set_op(op);
  *d.def_.add_children() = def_;
  return d;
}

Dataset Dataset::WithFunction(const std::string& op, const FunctionBody& fn,
                              const char* what) const {
  Dataset d = Transformed(op);
  if (!status_.ok()) return d;
  Scope root = Scope::NewRootScope();
  std::vector<Output> args;
  proto::DatasetFunction* f = d.def_.add_functions();
  for (size_t i = 0; i < types_.size(); ++i) {
    ops::PlaceholderOptions options;
    if (shapes_[i]) options.shape = shapes_[i]->dims();
    args.push_back(
        ops::Placeholder(root.WithOpName("arg" + std::to_string(i)), types_[i], options));
    f->add_args(args.back().op().name());
  }
  std::vector<Output> results = fn(root, args);
  auto graph = root.ToGraphDef();
  if (!graph.ok()) {
    d.status_ = errors::InvalidArgument("Dataset::", op, ": the ", what,
                                        " does not build: ", graph.status().message());
    return d;
  }
  if (results.empty()) {
    d.status_ = errors::InvalidArgument("Dataset::", op, ": the ", what, " returns nothing");
    return d;
  }
  *f->mutable_graph() = *std::move(graph);
  d.types_.clear();
  d.shapes_.clear();
  for (const Output& r : results) {
    f->add_outputs(r.name());
    d.types_.push_back(r.type());
    d.shapes_.push_back(root.InferredShape(r));
  }
  return d;
}

Dataset Dataset::Map(const FunctionBody& fn, int64_t num_parallel_calls) const {
  Dataset d = WithFunction("Map", fn, "map function");
  (*d.def_.mutable_attrs())["num_parallel_calls"] = MakeAttr(num_parallel_calls);
  return d;
}

Dataset Dataset::Filter(const FunctionBody& predicate) const {
  Dataset d = WithFunction("Filter", predicate, "filter predicate");
  if (d.status_.ok() && (d.types_.size() != 1 || d.types_[0] != DT_BOOL)) {
    d.status_ = errors::InvalidArgument("Dataset::Filter: the predicate must return one bool");
  }
  d.types_ = types_;  // the elements are the input's
  d.shapes_ = shapes_;
  return d;
}

Dataset Dataset::Batch(int64_t batch_size, bool drop_remainder) const {
  Dataset d = Transformed("Batch");
  (*d.def_.mutable_attrs())["batch_size"] = MakeAttr(batch_size);
  (*d.def_.mutable_attrs())["drop_remainder"] = MakeAttr(drop_remainder);
  for (Shape& s : d.shapes_) s = Prepend(drop_remainder ? batch_size : -1, s);
  return d;
}

Dataset Dataset::Shuffle(int64_t buffer_size, int64_t seed) const {
  Dataset d = Transformed("Shuffle");
  auto& attrs = *d.def_.mutable_attrs();
  attrs["buffer_size"] = MakeAttr(buffer_size);
  attrs["seed"] = MakeAttr(seed);
  attrs["seed2"] = MakeAttr(int64_t{0});
  attrs["reshuffle_each_iteration"] = MakeAttr(true);
  return d;
}

Dataset Dataset::WithInts(const std::string& op,
                          std::initializer_list<std::pair<const char*, int64_t>> attrs) const {
  Dataset d = Transformed(op);
  for (const auto& [name, value] : attrs) (*d.def_.mutable_attrs())[name] = MakeAttr(value);
  return d;
}

Dataset Dataset::Repeat(int64_t count) const { return WithInts("Repeat", {{"count", count}}); }
Dataset Dataset::Take(int64_t count) const { return WithInts("Take", {{"count", count}}); }
Dataset Dataset::Skip(int64_t count) const { return WithInts("Skip", {{"count", count}}); }
Dataset Dataset::Shard(int64_t num_shards, int64_t index) const {
  return WithInts("Shard", {{"num_shards", num_shards}, {"index", index}});
}
Dataset Dataset::Prefetch(int64_t buffer_size) const {
  return WithInts("Prefetch", {{"buffer_size", buffer_size}});
}

StatusOr<Iterator> MakeOneShotIterator(const Scope& scope, const Dataset& dataset) {
  TW_RETURN_IF_ERROR(dataset.status());
  std::vector<PartialShape> shapes;
  for (const auto& s : dataset.output_shapes()) shapes.push_back(ToPartial(s));
  InputList captures(dataset.inputs().begin(), dataset.inputs().end());
  TW_ASSIGN_OR_RETURN(Operation op,
                      scope.TryAddNode("OneShotIterator", {captures},
                                       {{"dataset", MakeAttr(dataset.def().SerializeAsString())},
                                        {"output_types", MakeAttr(dataset.output_types())},
                                        {"output_shapes", MakeAttr(shapes)}}));
  return Iterator{Output(op, 0), dataset.output_types()};
}

std::vector<Output> GetNext(const Scope& scope, const Iterator& iterator) {
  Operation op = scope.AddNode("IteratorGetNext", {{iterator.handle}},
                               {{"output_types", MakeAttr(iterator.types)}});
  std::vector<Output> out;
  if (!op.valid()) return out;
  for (size_t i = 0; i < iterator.types.size(); ++i) out.emplace_back(op, static_cast<int>(i));
  return out;
}

}  // namespace tw::data
