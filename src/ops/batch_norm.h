// What FusedBatchNorm's kernels share (batch_norm_ops.cc, batch_norm_grad_ops.cc): x's
// layout as channels-last rows, the NCHW <-> NHWC transposes, the checks of x and the
// per-channel vectors, and the attributes every kernel reads.
#ifndef TENSORWEAVE_SRC_OPS_BATCH_NORM_H_
#define TENSORWEAVE_SRC_OPS_BATCH_NORM_H_

#include <string>
#include <utility>
#include <vector>

#include "Eigen/Core"
#include "src/framework/op_kernel.h"

namespace tw::batch_norm {

template <typename T>
using Vec = Eigen::Array<T, Eigen::Dynamic, 1>;

// x's layout: rows of C channels (NHWC), or the same after a transpose (NCHW).
struct BnShape {
  int64_t n = 0, c = 0, hw = 0;  // batch, channels, height * width
  bool nchw = false;
  int64_t rows() const { return n * hw; }
};

// [N, C, HW] -> [N, HW, C] (to_nhwc) or back.
template <typename T>
void Transpose(const BnShape& s, const T* in, T* out, bool to_nhwc) {
  for (int64_t b = 0; b < s.n; ++b) {
    const int64_t base = b * s.c * s.hw;
    for (int64_t ch = 0; ch < s.c; ++ch) {
      for (int64_t p = 0; p < s.hw; ++p) {
        if (to_nhwc) {
          out[base + p * s.c + ch] = in[base + ch * s.hw + p];
        } else {
          out[base + ch * s.hw + p] = in[base + p * s.c + ch];
        }
      }
    }
  }
}

// Channels-last view of a tensor: the data itself (NHWC) or a transposed copy (NCHW).
template <typename T>
const T* ChannelsLast(const BnShape& s, const Tensor& t, std::vector<T>* copy) {
  if (!s.nchw) return t.flat<T>().data();
  copy->resize(static_cast<size_t>(s.rows() * s.c));
  Transpose(s, t.flat<T>().data(), copy->data(), /*to_nhwc=*/true);
  return copy->data();
}

// data_format: "NHWC" or "NCHW", else InvalidArgument "Invalid data format" naming the node.
Status ReadFormat(const OpKernel& k, std::string* format);

// Checks x (4-D) and the per-channel vectors named in `vectors` (1-D, C entries).
StatusOr<BnShape> MakeBnShape(const OpKernel& k, bool nchw, const Tensor& x,
                              const std::vector<std::pair<const char*, const Tensor*>>& vectors);

// Every input of x's type (V2 and V3 have a type attribute U of their own).
Status CheckTypes(const OpKernel& k);

class BatchNormKernel : public OpKernel {
 public:
  explicit BatchNormKernel(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("epsilon", &epsilon_));
    c->SetStatus(c->GetAttr("is_training", &is_training_));
    std::string format;
    c->SetStatus(ReadFormat(*this, &format));
    nchw_ = format == "NCHW";
  }
  bool IsExpensive() const override { return true; }

 protected:
  float epsilon_ = 1e-4f;
  bool is_training_ = true;
  bool nchw_ = false;
};

}  // namespace tw::batch_norm

#endif  // TENSORWEAVE_SRC_OPS_BATCH_NORM_H_
