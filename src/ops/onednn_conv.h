// Float convolutions through oneDNN (Debian's libdnnl, the library TensorFlow and PyTorch
// use on CPUs): its jit kernels for the machine's vector ISA, 1.2-4x the im2col kernels'
// speed per thread on the convolutions of image models (docs/performance.md).
//
// Tensors stay as the ops hold them, NHWC activations and HWIO filters; only the filter is
// reordered, per call, into the blocked layout oneDNN's direct kernels read (a small copy:
// without it oneDNN falls back to its own im2col). Every call runs on the calling thread
// alone: conv_ops.cc splits the images across the device's pool (parallel_for.h), so oneDNN's
// OpenMP runtime never starts threads of its own next to the executor's.
//
// Plans (oneDNN primitives) are made once per geometry and pass, cached process-wide, and
// are safe to run from several threads at once (each call brings its own scratch memory).
#ifndef TENSORWEAVE_SRC_OPS_ONEDNN_CONV_H_
#define TENSORWEAVE_SRC_OPS_ONEDNN_CONV_H_

#include <cstdint>

namespace tw::onednn {

// One convolution, every size known: `batch` NHWC images of in_h x in_w x in_c, an HWIO
// filter of k_h x k_w x in_c x out_c, an NHWC output of out_h x out_w x out_c. Padding is
// given at the top and left; the bottom and right follow from the output size.
struct ConvGeometry {
  int64_t batch = 0, in_h = 0, in_w = 0, in_c = 0;
  int64_t k_h = 0, k_w = 0, out_c = 0, out_h = 0, out_w = 0;
  int64_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0;
};

// Each returns false, having computed nothing the caller may use, when oneDNN has no fast
// (jit) kernel for the geometry on this CPU or the call failed; the caller then computes it
// its own way. True means every output element was written.

// output = conv(input, filter).
bool ConvForward(const ConvGeometry& g, const float* input, const float* filter, float* output);

// input_grad = the gradient of conv(input, filter) with respect to input, given out_grad.
bool ConvBackwardData(const ConvGeometry& g, const float* filter, const float* out_grad,
                      float* input_grad);

// filter_grad = the gradient with respect to filter, summed over the batch.
bool ConvBackwardWeights(const ConvGeometry& g, const float* input, const float* out_grad,
                         float* filter_grad);

}  // namespace tw::onednn

#endif  // TENSORWEAVE_SRC_OPS_ONEDNN_CONV_H_
