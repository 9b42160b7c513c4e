// ParseSingleSequenceExample: one tf.train.SequenceExample into its context features
// (FixedLenFeature dense, VarLenFeature sparse) and its feature lists
// (FixedLenSequenceFeature as [steps, shape...], VarLenFeature as a [steps, longest]
// sparse tensor), with TensorFlow's op signature and messages
// (tf.parse_single_sequence_example). The record comes from a file or the network: any
// malformed or mismatched input is InvalidArgument naming the feature, never a crash.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "src/base/request_text.h"
#include "src/framework/attr_value.h"
#include "src/framework/op_kernel.h"
#include "src/graph/gradient_registry.h"
#include "tensorweave/protobuf/example.pb.h"

namespace tw {
namespace {

TW_REGISTER_OP("ParseSingleSequenceExample")
    .Input("serialized: string")
    .Input("feature_list_dense_missing_assumed_empty: string")
    .Input("context_sparse_keys: Ncontext_sparse * string")
    .Input("context_dense_keys: Ncontext_dense * string")
    .Input("feature_list_sparse_keys: Nfeature_list_sparse * string")
    .Input("feature_list_dense_keys: Nfeature_list_dense * string")
    .Input("context_dense_defaults: Tcontext_dense")
    .Input("debug_name: string")
    .Output("context_sparse_indices: Ncontext_sparse * int64")
    .Output("context_sparse_values: context_sparse_types")
    .Output("context_sparse_shapes: Ncontext_sparse * int64")
    .Output("context_dense_values: Tcontext_dense")
    .Output("feature_list_sparse_indices: Nfeature_list_sparse * int64")
    .Output("feature_list_sparse_values: feature_list_sparse_types")
    .Output("feature_list_sparse_shapes: Nfeature_list_sparse * int64")
    .Output("feature_list_dense_values: feature_list_dense_types")
    .Attr("Ncontext_sparse: int >= 0")
    .Attr("Ncontext_dense: int >= 0")
    .Attr("Nfeature_list_sparse: int >= 0")
    .Attr("Nfeature_list_dense: int >= 0")
    .Attr("context_sparse_types: list(type) >= 0")
    .Attr("Tcontext_dense: list(type) >= 0")
    .Attr("feature_list_dense_types: list(type) >= 0")
    .Attr("context_dense_shapes: list(shape) >= 0")
    .Attr("feature_list_sparse_types: list(type) >= 0")
    .Attr("feature_list_dense_shapes: list(shape) >= 0")
    .Doc("Parses one SequenceExample into context and feature-list tensors.");

const char* KindName(DataType t) {
  return t == DT_FLOAT ? "float" : t == DT_INT64 ? "int64" : "string";
}

// The number of values of `feature` if it holds `dtype`, else InvalidArgument naming `key`.
StatusOr<int64_t> ValueCount(const proto::Feature& feature, DataType dtype,
                             const std::string& key) {
  switch (feature.kind_case()) {
    case proto::Feature::kFloatList:
      if (dtype == DT_FLOAT) return feature.float_list().value_size();
      break;
    case proto::Feature::kInt64List:
      if (dtype == DT_INT64) return feature.int64_list().value_size();
      break;
    case proto::Feature::kBytesList:
      if (dtype == DT_STRING) return feature.bytes_list().value_size();
      break;
    default:
      return int64_t{0};  // no kind set: an empty feature of any type
  }
  const char* actual = feature.kind_case() == proto::Feature::kFloatList   ? "float"
                       : feature.kind_case() == proto::Feature::kInt64List ? "int64"
                                                                           : "string";
  return errors::InvalidArgument("Name: ", key, ", Feature: ", key,
                                 ".  Data types don't match. Expected type: ", KindName(dtype),
                                 ", Actual type: ", actual);
}

// Copies the values of `feature` (of out's type, already checked) to out[at, ...).
void CopyValues(const proto::Feature& feature, Tensor* out, int64_t at) {
  switch (feature.kind_case()) {
    case proto::Feature::kFloatList:
      std::copy(feature.float_list().value().begin(), feature.float_list().value().end(),
                out->flat<float>().begin() + at);
      break;
    case proto::Feature::kInt64List:
      std::copy(feature.int64_list().value().begin(), feature.int64_list().value().end(),
                out->flat<int64_t>().begin() + at);
      break;
    case proto::Feature::kBytesList:
      std::copy(feature.bytes_list().value().begin(), feature.bytes_list().value().end(),
                out->flat<std::string>().begin() + at);
      break;
    default:
      break;
  }
}

StatusOr<Tensor> NewTensor(DataType dtype, std::vector<int64_t> dims) {
  TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::Create(dims));
  return Tensor::Allocate(dtype, shape);
}

// A fully defined shape's dimensions, or InvalidArgument naming the attribute.
StatusOr<std::vector<int64_t>> Defined(const PartialShape& shape, const char* attr, size_t i) {
  bool ok = !shape.unknown_rank;
  for (int64_t d : shape.dims) ok = ok && d >= 0;
  if (!ok) {
    return errors::InvalidArgument("ParseSingleSequenceExample: ", attr, "[", i, "] is ",
                                   shape.DebugString(), "; it must be fully defined");
  }
  return shape.dims;
}

int64_t Product(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

class ParseSingleSequenceExampleOp : public OpKernel {
 public:
  explicit ParseSingleSequenceExampleOp(OpKernelConstruction* c) : OpKernel(c) {
    Status s = c->GetAttr("Ncontext_sparse", &n_context_sparse_);
    if (s.ok()) s = c->GetAttr("Ncontext_dense", &n_context_dense_);
    if (s.ok()) s = c->GetAttr("Nfeature_list_sparse", &n_list_sparse_);
    if (s.ok()) s = c->GetAttr("Nfeature_list_dense", &n_list_dense_);
    if (s.ok()) s = c->GetAttr("context_sparse_types", &context_sparse_types_);
    if (s.ok()) s = c->GetAttr("Tcontext_dense", &context_dense_types_);
    if (s.ok()) s = c->GetAttr("feature_list_sparse_types", &list_sparse_types_);
    if (s.ok()) s = c->GetAttr("feature_list_dense_types", &list_dense_types_);
    std::vector<PartialShape> context_shapes, list_shapes;
    if (s.ok()) s = c->GetAttr("context_dense_shapes", &context_shapes);
    if (s.ok()) s = c->GetAttr("feature_list_dense_shapes", &list_shapes);
    if (s.ok() && (static_cast<int>(context_sparse_types_.size()) != n_context_sparse_ ||
                   static_cast<int>(context_dense_types_.size()) != n_context_dense_ ||
                   static_cast<int>(context_shapes.size()) != n_context_dense_ ||
                   static_cast<int>(list_sparse_types_.size()) != n_list_sparse_ ||
                   static_cast<int>(list_dense_types_.size()) != n_list_dense_ ||
                   static_cast<int>(list_shapes.size()) != n_list_dense_)) {
      s = errors::InvalidArgument("ParseSingleSequenceExample ", c->def().name(),
                                  ": the type and shape lists do not match their counts");
    }
    for (const auto* types :
         {&context_sparse_types_, &context_dense_types_, &list_sparse_types_, &list_dense_types_}) {
      for (DataType t : *types) {
        if (s.ok() && t != DT_FLOAT && t != DT_INT64 && t != DT_STRING) {
          s = errors::InvalidArgument("ParseSingleSequenceExample ", c->def().name(), ": ",
                                      DataTypeName(t),
                                      " is not a feature type (float, int64 "
                                      "or string)");
        }
      }
    }
    for (size_t i = 0; s.ok() && i < context_shapes.size(); ++i) {
      auto dims = Defined(context_shapes[i], "context_dense_shapes", i);
      s = dims.status();
      if (s.ok()) context_dense_shapes_.push_back(*dims);
    }
    for (size_t i = 0; s.ok() && i < list_shapes.size(); ++i) {
      auto dims = Defined(list_shapes[i], "feature_list_dense_shapes", i);
      s = dims.status();
      if (s.ok()) list_dense_shapes_.push_back(*dims);
    }
    c->SetStatus(s);
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& serialized = ctx->input(0);
    const Tensor& assumed_empty = ctx->input(1);
    TW_OP_REQUIRES(ctx, serialized.rank() == 0,
                   errors::InvalidArgument("Expected serialized to be a scalar, got shape: ",
                                           serialized.shape().DebugString()));
    int in = 2;
    auto keys = [&](int n, std::vector<std::string>* out) -> Status {
      for (int i = 0; i < n; ++i, ++in) {
        const Tensor& key = ctx->input(in);
        if (key.num_elements() != 1) {
          return errors::InvalidArgument("Expected a scalar key, got shape ",
                                         key.shape().DebugString());
        }
        out->push_back(key.flat<std::string>()[0]);
      }
      return OkStatus();
    };
    std::vector<std::string> context_sparse, context_dense, list_sparse, list_dense;
    TW_OP_REQUIRES_OK(ctx, keys(n_context_sparse_, &context_sparse));
    TW_OP_REQUIRES_OK(ctx, keys(n_context_dense_, &context_dense));
    TW_OP_REQUIRES_OK(ctx, keys(n_list_sparse_, &list_sparse));
    TW_OP_REQUIRES_OK(ctx, keys(n_list_dense_, &list_dense));
    const int first_default = in;
    const Tensor& debug_name = ctx->input(first_default + n_context_dense_);
    const std::string name =
        debug_name.num_elements() > 0 ? debug_name.flat<std::string>()[0] : std::string();
    std::set<std::string> missing_ok;
    for (int64_t i = 0; i < assumed_empty.num_elements(); ++i) {
      missing_ok.insert(assumed_empty.flat<std::string>()[i]);
    }

    proto::SequenceExample example;
    TW_OP_REQUIRES(
        ctx, example.ParseFromString(serialized.flat<std::string>()[0]),
        errors::InvalidArgument("Could not parse example input, value: '",
                                QuoteRequestText(serialized.flat<std::string>()[0]), "'"));
    const auto& context = example.context().feature();
    const auto& lists = example.feature_lists().feature_list();
    int out = 0;

    // Context, sparse: indices [n, 1], values [n], shape [n].
    std::vector<Tensor> sparse_indices, sparse_values, sparse_shapes;
    for (int i = 0; i < n_context_sparse_; ++i) {
      const DataType dtype = context_sparse_types_[i];
      auto it = context.find(context_sparse[i]);
      int64_t n = 0;
      if (it != context.end()) {
        auto count = ValueCount(it->second, dtype, context_sparse[i]);
        TW_OP_REQUIRES_OK(ctx, count.status());
        n = *count;
      }
      auto indices = NewTensor(DT_INT64, {n, 1});
      auto values = NewTensor(dtype, {n});
      auto shape = NewTensor(DT_INT64, {1});
      TW_OP_REQUIRES_OK(ctx, indices.status());
      TW_OP_REQUIRES_OK(ctx, values.status());
      TW_OP_REQUIRES_OK(ctx, shape.status());
      for (int64_t k = 0; k < n; ++k) indices->flat<int64_t>()[k] = k;
      if (n > 0) CopyValues(it->second, &*values, 0);
      shape->flat<int64_t>()[0] = n;
      sparse_indices.push_back(*std::move(indices));
      sparse_values.push_back(*std::move(values));
      sparse_shapes.push_back(*std::move(shape));
    }
    for (auto* group : {&sparse_indices, &sparse_values, &sparse_shapes}) {
      for (Tensor& t : *group) ctx->set_output(out++, std::move(t));
    }

    // Context, dense: the feature's values in its shape, or the default.
    for (int i = 0; i < n_context_dense_; ++i) {
      const DataType dtype = context_dense_types_[i];
      const std::vector<int64_t>& dims = context_dense_shapes_[i];
      const Tensor& fallback = ctx->input(first_default + i);
      auto value = NewTensor(dtype, dims);
      TW_OP_REQUIRES_OK(ctx, value.status());
      auto it = context.find(context_dense[i]);
      if (it == context.end()) {
        TW_OP_REQUIRES(ctx, fallback.num_elements() > 0,
                       errors::InvalidArgument("Name: ", name, ", Feature: ", context_dense[i],
                                               " (data type: ", KindName(dtype),
                                               ") is required but could not be found."));
        TW_OP_REQUIRES(ctx, fallback.num_elements() == Product(dims) && fallback.dtype() == dtype,
                       errors::InvalidArgument("Name: ", name, ", Feature: ", context_dense[i],
                                               ": its default has the wrong shape or type"));
        ctx->set_output(out++, fallback);
        continue;
      }
      auto count = ValueCount(it->second, dtype, context_dense[i]);
      TW_OP_REQUIRES_OK(ctx, count.status());
      TW_OP_REQUIRES(
          ctx, *count == Product(dims),
          errors::InvalidArgument("Name: ", name, ", Key: ", context_dense[i],
                                  ".  Number of values != expected.  values size: ", *count,
                                  " but output shape: ", value->shape().DebugString()));
      CopyValues(it->second, &*value, 0);
      ctx->set_output(out++, *std::move(value));
    }

    // Feature lists, sparse: step t's j-th value at [t, j]; shape [steps, longest].
    std::vector<Tensor> list_indices, list_values, list_shapes;
    for (int i = 0; i < n_list_sparse_; ++i) {
      const DataType dtype = list_sparse_types_[i];
      auto it = lists.find(list_sparse[i]);
      int64_t steps = 0, total = 0, longest = 0;
      std::vector<int64_t> counts;
      if (it != lists.end()) {
        for (const proto::Feature& step : it->second.feature()) {
          auto count = ValueCount(step, dtype, list_sparse[i]);
          TW_OP_REQUIRES_OK(ctx, count.status());
          counts.push_back(*count);
          total += *count;
          longest = std::max(longest, *count);
        }
        steps = it->second.feature_size();
      }
      auto indices = NewTensor(DT_INT64, {total, 2});
      auto values = NewTensor(dtype, {total});
      auto shape = NewTensor(DT_INT64, {2});
      TW_OP_REQUIRES_OK(ctx, indices.status());
      TW_OP_REQUIRES_OK(ctx, values.status());
      TW_OP_REQUIRES_OK(ctx, shape.status());
      int64_t at = 0;
      for (int64_t t = 0; t < steps; ++t) {
        CopyValues(it->second.feature(static_cast<int>(t)), &*values, at);
        for (int64_t j = 0; j < counts[t]; ++j, ++at) {
          indices->flat<int64_t>()[2 * at] = t;
          indices->flat<int64_t>()[2 * at + 1] = j;
        }
      }
      shape->flat<int64_t>()[0] = steps;
      shape->flat<int64_t>()[1] = longest;
      list_indices.push_back(*std::move(indices));
      list_values.push_back(*std::move(values));
      list_shapes.push_back(*std::move(shape));
    }
    for (auto* group : {&list_indices, &list_values, &list_shapes}) {
      for (Tensor& t : *group) ctx->set_output(out++, std::move(t));
    }

    // Feature lists, dense: [steps, shape...], each step exactly the shape's values.
    for (int i = 0; i < n_list_dense_; ++i) {
      const DataType dtype = list_dense_types_[i];
      const std::vector<int64_t>& dims = list_dense_shapes_[i];
      auto it = lists.find(list_dense[i]);
      TW_OP_REQUIRES(
          ctx, it != lists.end() || missing_ok.count(list_dense[i]) > 0,
          errors::InvalidArgument("Name: ", name, ", Feature list '", list_dense[i],
                                  "' is required but could not be found.  Did you mean to "
                                  "include it in feature_list_dense_missing_assumed_empty or "
                                  "feature_list_dense_defaults?"));
      const int64_t steps = it == lists.end() ? 0 : it->second.feature_size();
      std::vector<int64_t> out_dims = {steps};
      out_dims.insert(out_dims.end(), dims.begin(), dims.end());
      auto value = NewTensor(dtype, out_dims);
      TW_OP_REQUIRES_OK(ctx, value.status());
      const int64_t per_step = Product(dims);
      for (int64_t t = 0; t < steps; ++t) {
        const proto::Feature& step = it->second.feature(static_cast<int>(t));
        auto count = ValueCount(step, dtype, list_dense[i]);
        TW_OP_REQUIRES_OK(ctx, count.status());
        TW_OP_REQUIRES(
            ctx, *count == per_step,
            errors::InvalidArgument("Name: ", name, ", Key: ", list_dense[i], ", Index: ", t,
                                    ".  Number of values != expected.  values size: ", *count,
                                    " but output shape: [", absl::StrJoin(dims, ","), "]"));
        CopyValues(step, &*value, t * per_step);
      }
      ctx->set_output(out++, *std::move(value));
    }
  }

 private:
  int n_context_sparse_ = 0, n_context_dense_ = 0, n_list_sparse_ = 0, n_list_dense_ = 0;
  std::vector<DataType> context_sparse_types_, context_dense_types_, list_sparse_types_,
      list_dense_types_;
  std::vector<std::vector<int64_t>> context_dense_shapes_, list_dense_shapes_;
};
TW_REGISTER_KERNEL("ParseSingleSequenceExample", "CPU", ParseSingleSequenceExampleOp);
TW_NO_GRADIENT("ParseSingleSequenceExample");

}  // namespace
}  // namespace tw
