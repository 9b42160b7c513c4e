// SparseCross: the crosses of categorical features, TensorFlow's op (feature columns'
// crossed_column, tf.sparse.cross and cross_hashed). Every example's crosses are the
// cartesian product of its values in each input (sparse inputs first, then dense ones, as
// TensorFlow orders them; the first input varies slowest). Hashed, a cross is
// FingerprintCat64 of hash_key and each value's hash (a string's FarmHash Fingerprint64,
// an integer itself) modulo num_buckets (or the largest int64 when 0): TensorFlow's
// numbers exactly, so a model's crossed buckets are the same. Unhashed, it is the values'
// text joined by "_X_".
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "farmhash.h"
#include "src/framework/attr_value.h"
#include "src/framework/op_kernel.h"
#include "src/graph/gradient_registry.h"
#include "tensorweave/ops/string_ops.h"

namespace tw {
namespace {

TW_REGISTER_OP("SparseCross")
    .Input("indices: N * int64")
    .Input("values: sparse_types")
    .Input("shapes: N * int64")
    .Input("dense_inputs: dense_types")
    .Output("output_indices: int64")
    .Output("output_values: out_type")
    .Output("output_shape: int64")
    .Attr("N: int >= 0")
    .Attr("hashed_output: bool")
    .Attr("num_buckets: int >= 0")
    .Attr("hash_key: int")
    .Attr("sparse_types: list(type) >= 0")
    .Attr("dense_types: list(type) >= 0")
    .Attr("out_type: type")
    .Attr("internal_type: type")
    .Doc("The crosses of the inputs' values per example, hashed or as text.");

// TensorFlow's FingerprintCat64 (tensorflow/core/platform/fingerprint.h): combines two
// fingerprints, order-dependently.
uint64_t ShiftMix(uint64_t v) { return v ^ (v >> 47); }
uint64_t FingerprintCat64(uint64_t fp1, uint64_t fp2) {
  constexpr uint64_t kMul = 0xc6a4a7935bd1e995ULL;
  uint64_t result = fp1 ^ kMul;
  result ^= ShiftMix(fp2 * kMul) * kMul;
  result *= kMul;
  result = ShiftMix(result) * kMul;
  return ShiftMix(result);
}

// One input as the crosser reads it: the values of each example, in order.
struct Column {
  const Tensor* values = nullptr;
  std::vector<std::vector<int64_t>> rows;  // per example: positions in `values`

  uint64_t Hash(int64_t i) const {
    if (values->dtype() == DT_STRING) {
      const std::string& s = values->flat<std::string>()[i];
      return util::Fingerprint64(s.data(), s.size());
    }
    return static_cast<uint64_t>(values->flat<int64_t>()[i]);
  }
  std::string Text(int64_t i) const {
    if (values->dtype() == DT_STRING) return values->flat<std::string>()[i];
    return std::to_string(values->flat<int64_t>()[i]);
  }
};

class SparseCrossOp : public OpKernel {
 public:
  explicit SparseCrossOp(OpKernelConstruction* c) : OpKernel(c) {
    Status s = c->GetAttr("hashed_output", &hashed_);
    if (s.ok()) s = c->GetAttr("num_buckets", &num_buckets_);
    if (s.ok()) s = c->GetAttr("hash_key", &hash_key_);
    if (s.ok()) s = c->GetAttr("N", &num_sparse_);
    DataType out_type = DT_INVALID;
    if (s.ok()) s = c->GetAttr("out_type", &out_type);
    if (s.ok() && out_type != (hashed_ ? DT_INT64 : DT_STRING)) {
      s = errors::InvalidArgument("SparseCross: out_type must be ", hashed_ ? "int64" : "string",
                                  " when hashed_output is ", hashed_ ? "true" : "false");
    }
    c->SetStatus(s);
  }

  void Compute(OpKernelContext* ctx) override {
    const int num_dense = ctx->num_inputs() - 3 * num_sparse_;
    std::vector<Column> columns;
    int64_t batch = -1;
    auto check_batch = [&](int64_t rows) -> Status {
      if (rows < 0) return errors::InvalidArgument("SparseCross: a batch of ", rows, " examples");
      if (batch >= 0 && rows != batch) {
        return errors::InvalidArgument("Expected batch size ", batch, " got ", rows);
      }
      batch = rows;
      return OkStatus();
    };
    for (int i = 0; i < num_sparse_; ++i) {
      const Tensor& indices = ctx->input(i);
      const Tensor& values = ctx->input(num_sparse_ + i);
      const Tensor& shape = ctx->input(2 * num_sparse_ + i);
      TW_OP_REQUIRES(ctx, indices.rank() == 2,
                     errors::InvalidArgument("Input indices should be a matrix but received "
                                             "shape ",
                                             indices.shape().DebugString(), " at ", i));
      TW_OP_REQUIRES(ctx, indices.shape().dim(1) == 2,
                     errors::InvalidArgument("Expected D2 of index to be 2 got ",
                                             indices.shape().dim(1), " at position ", i));
      TW_OP_REQUIRES(ctx, values.rank() == 1 && values.num_elements() == indices.shape().dim(0),
                     errors::InvalidArgument("Input values should be a vector of one value per "
                                             "index, got shape ",
                                             values.shape().DebugString(), " at position ", i));
      TW_OP_REQUIRES(ctx, shape.rank() == 1 && shape.num_elements() == 2,
                     errors::InvalidArgument("Input shapes should be a vector of 2 elements, got "
                                             "shape ",
                                             shape.shape().DebugString(), " at position ", i));
      TW_OP_REQUIRES_OK(ctx, CheckType(values.dtype(), "sparse", i));
      TW_OP_REQUIRES_OK(ctx, check_batch(shape.flat<int64_t>()[0]));
      Column column{.values = &values, .rows = std::vector<std::vector<int64_t>>(batch)};
      auto idx = indices.flat<int64_t>();
      for (int64_t k = 0; k < indices.shape().dim(0); ++k) {
        const int64_t row = idx[2 * k];
        TW_OP_REQUIRES(
            ctx, row >= 0 && row < batch,
            errors::InvalidArgument("Input indices[", k, "] = ", row, " is outside the batch of ",
                                    batch, " at position ", i));
        column.rows[row].push_back(k);
      }
      columns.push_back(std::move(column));
    }
    for (int i = 0; i < num_dense; ++i) {
      const Tensor& dense = ctx->input(3 * num_sparse_ + i);
      TW_OP_REQUIRES(ctx, dense.rank() == 2,
                     errors::InvalidArgument("Dense inputs should be a matrix but received shape ",
                                             dense.shape().DebugString(), " at position ", i));
      TW_OP_REQUIRES_OK(ctx, CheckType(dense.dtype(), "dense", i));
      TW_OP_REQUIRES_OK(ctx, check_batch(dense.shape().dim(0)));
      const int64_t width = dense.shape().dim(1);
      Column column{.values = &dense, .rows = std::vector<std::vector<int64_t>>(batch)};
      for (int64_t b = 0; b < batch; ++b) {
        for (int64_t k = 0; k < width; ++k) column.rows[b].push_back(b * width + k);
      }
      columns.push_back(std::move(column));
    }
    TW_OP_REQUIRES(ctx, !columns.empty(),
                   errors::InvalidArgument("SparseCross needs at least one input"));

    // Crosses per example: the product of the columns' counts.
    std::vector<int64_t> counts(batch, 1);
    int64_t total = 0, widest = 0;
    for (int64_t b = 0; b < batch; ++b) {
      for (const Column& column : columns) {
        counts[b] *= static_cast<int64_t>(column.rows[b].size());
        TW_OP_REQUIRES(ctx, counts[b] <= (int64_t{1} << 31),
                       errors::InvalidArgument("SparseCross: example ", b,
                                               " has more than 2^31 "
                                               "crosses"));
      }
      total += counts[b];
      widest = std::max(widest, counts[b]);
    }
    auto indices = Tensor::Allocate(DT_INT64, TensorShape({total, 2}));
    auto values = Tensor::Allocate(hashed_ ? DT_INT64 : DT_STRING, TensorShape({total}));
    auto shape = Tensor::Allocate(DT_INT64, TensorShape({2}));
    TW_OP_REQUIRES_OK(ctx, indices.status());
    TW_OP_REQUIRES_OK(ctx, values.status());
    TW_OP_REQUIRES_OK(ctx, shape.status());
    auto out_indices = indices->flat<int64_t>();
    int64_t n = 0;
    std::vector<size_t> position(columns.size());
    for (int64_t b = 0; b < batch; ++b) {
      std::fill(position.begin(), position.end(), 0);
      for (int64_t k = 0; k < counts[b]; ++k, ++n) {
        out_indices[2 * n] = b;
        out_indices[2 * n + 1] = k;
        if (hashed_) {
          uint64_t hashed = static_cast<uint64_t>(hash_key_);
          for (size_t c = 0; c < columns.size(); ++c) {
            hashed = FingerprintCat64(hashed, columns[c].Hash(columns[c].rows[b][position[c]]));
          }
          const uint64_t modulus = num_buckets_ > 0
                                       ? static_cast<uint64_t>(num_buckets_)
                                       : static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
          values->flat<int64_t>()[n] = static_cast<int64_t>(hashed % modulus);
        } else {
          std::string& text = values->flat<std::string>()[n];
          for (size_t c = 0; c < columns.size(); ++c) {
            if (c > 0) text += "_X_";
            text += columns[c].Text(columns[c].rows[b][position[c]]);
          }
        }
        // The next cross: the last column advances fastest.
        for (size_t c = columns.size(); c-- > 0;) {
          if (++position[c] < columns[c].rows[b].size()) break;
          position[c] = 0;
        }
      }
    }
    shape->flat<int64_t>()[0] = batch;
    shape->flat<int64_t>()[1] = widest;
    ctx->set_output(0, *std::move(indices));
    ctx->set_output(1, *std::move(values));
    ctx->set_output(2, *std::move(shape));
  }

 private:
  static Status CheckType(DataType dtype, const char* kind, int i) {
    if (dtype == DT_INT64 || dtype == DT_STRING) return OkStatus();
    return errors::InvalidArgument("SparseCross: ", kind, " input ", i,
                                   " must be int64 or string, got ", DataTypeName(dtype));
  }

  bool hashed_ = false;
  int64_t num_buckets_ = 0;
  int64_t hash_key_ = 0;
  int num_sparse_ = 0;
};
TW_REGISTER_KERNEL("SparseCross", "CPU", SparseCrossOp);
TW_NO_GRADIENT("SparseCross");

}  // namespace

namespace ops {

SparseOutput SparseCrossHashed(const Scope& scope, const std::vector<SparseOutput>& sparse,
                               const std::vector<Input>& dense, int64_t num_buckets,
                               int64_t hash_key) {
  InputList indices, values, shapes;
  for (const SparseOutput& s : sparse) {
    indices.emplace_back(s.indices);
    values.emplace_back(s.values);
    shapes.emplace_back(s.dense_shape);
  }
  // N, sparse_types and dense_types are inferred from the inputs.
  Operation op =
      scope.AddNode("SparseCross", {indices, values, shapes, InputList(dense.begin(), dense.end())},
                    {{"hashed_output", MakeAttr(true)},
                     {"num_buckets", MakeAttr(num_buckets)},
                     {"hash_key", MakeAttr(hash_key)},
                     {"out_type", MakeAttr(DT_INT64)},
                     {"internal_type", MakeAttr(DT_INT64)}});
  if (!op.valid()) return {};
  return {Output(op, 0), Output(op, 1), Output(op, 2)};
}

}  // namespace ops
}  // namespace tw
