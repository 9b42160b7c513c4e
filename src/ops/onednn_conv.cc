#include "src/ops/onednn_conv.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "oneapi/dnnl/dnnl.hpp"
#include "src/base/logging.h"

// OpenMP's own calls, from libgomp, the runtime Debian's oneDNN is built on (declared here
// rather than through <omp.h>: clang's omp.h belongs to its own runtime, libomp).
extern "C" int omp_get_max_threads();
extern "C" void omp_set_num_threads(int threads);

namespace tw::onednn {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

enum class Pass : int64_t { kForward, kBackwardData, kBackwardWeights };

// A primitive and the scratchpad it needs (given per call: user scratchpad mode).
struct Step {
  dnnl::primitive primitive;
  memory::desc scratchpad;
};

// Everything one convolution pass needs, made once: the convolution, and the reorder
// between the op's HWIO filter and the convolution's blocked one (into the convolution
// for the forward and data passes, out of it for the weights pass).
struct Plan {
  Step conv;
  memory::desc src, weights, dst;  // src and dst: NHWC; for the backward passes their diffs
  memory::desc user_weights;       // HWIO
  bool reorders_weights = false;
  Step weights_reorder;
};

dnnl::engine& Engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream& ThreadStream() {
  thread_local dnnl::stream stream(Engine());
  return stream;
}

// While alive, the calling thread's OpenMP regions (oneDNN's) have one thread; the thread's
// own setting comes back after, since it may be a program's thread that another OpenMP
// library (PyTorch, say) also runs on.
class OneOpenMpThread {
 public:
  OneOpenMpThread() : saved_(omp_get_max_threads()) { omp_set_num_threads(1); }
  ~OneOpenMpThread() { omp_set_num_threads(saved_); }
  OneOpenMpThread(const OneOpenMpThread&) = delete;
  OneOpenMpThread& operator=(const OneOpenMpThread&) = delete;

 private:
  int saved_;
};

// Scratch memory a thread keeps between calls: the convolution's and the reorder's
// scratchpads, and the blocked filter.
struct ThreadBuffers {
  std::vector<char> scratchpad;
  std::vector<float> weights;
};
ThreadBuffers& Buffers() {
  thread_local ThreadBuffers buffers;
  return buffers;
}

dnnl::primitive_attr UserScratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

// oneDNN's reference kernels are loops for correctness checking, slower than im2col.
bool IsFast(const char* implementation) {
  return std::string_view(implementation).rfind("ref", 0) != 0;
}

template <typename Primitive, typename PrimitiveDesc>
Step StepOf(const PrimitiveDesc& pd) {
  return Step{Primitive(pd), pd.scratchpad_desc()};
}

// The reorder from `from` to `to` (user scratchpad, like the convolutions).
Step ReorderStep(const memory::desc& from, const memory::desc& to) {
  dnnl::reorder::primitive_desc pd(Engine(), from, Engine(), to, UserScratchpad());
  return StepOf<dnnl::reorder>(pd);
}

memory::dims Dims(std::initializer_list<int64_t> values) { return memory::dims(values); }

// Makes the plan for `g` and `pass`, or null when oneDNN has only its reference kernel;
// throws dnnl::error when oneDNN has none at all.
std::unique_ptr<Plan> MakePlan(const ConvGeometry& g, Pass pass) {
  const memory::dims src_dims = Dims({g.batch, g.in_c, g.in_h, g.in_w});
  const memory::dims weights_dims = Dims({g.out_c, g.in_c, g.k_h, g.k_w});
  const memory::dims dst_dims = Dims({g.batch, g.out_c, g.out_h, g.out_w});
  const memory::dims strides = Dims({g.stride_h, g.stride_w});
  const memory::dims dilations = Dims({g.dilation_h - 1, g.dilation_w - 1});  // oneDNN's: 0 = none
  const memory::dims pad_before = Dims({g.pad_top, g.pad_left});
  // The padding after the image that gives this output size. A VALID window that leaves the
  // last rows unread makes it negative; 0 gives the same output size (it is less than a
  // stride short), which is what oneDNN checks.
  auto pad_after = [](int64_t in, int64_t k, int64_t stride, int64_t dilation, int64_t out,
                      int64_t before) {
    return std::max<int64_t>(0, (out - 1) * stride + (k - 1) * dilation + 1 - in - before);
  };
  const memory::dims pad_after_dims =
      Dims({pad_after(g.in_h, g.k_h, g.stride_h, g.dilation_h, g.out_h, g.pad_top),
            pad_after(g.in_w, g.k_w, g.stride_w, g.dilation_w, g.out_w, g.pad_left)});

  const memory::desc src(src_dims, memory::data_type::f32, Tag::nhwc);
  const memory::desc dst(dst_dims, memory::data_type::f32, Tag::nhwc);
  // `any`: oneDNN's direct kernels want a blocked filter; forced HWIO they fall back to
  // their own im2col.
  const memory::desc any_weights(weights_dims, memory::data_type::f32, Tag::any);
  const dnnl::primitive_attr attr = UserScratchpad();

  dnnl::convolution_forward::desc forward_desc(
      dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, src, any_weights, dst,
      strides, dilations, pad_before, pad_after_dims);
  dnnl::convolution_forward::primitive_desc forward(forward_desc, attr, Engine());

  auto plan = std::make_unique<Plan>();
  plan->user_weights = memory::desc(weights_dims, memory::data_type::f32, Tag::hwio);
  plan->src = src;
  plan->dst = dst;
  if (pass == Pass::kForward) {
    if (!IsFast(forward.impl_info_str())) return nullptr;
    plan->conv = StepOf<dnnl::convolution_forward>(forward);
    plan->weights = forward.weights_desc();
  } else if (pass == Pass::kBackwardData) {
    dnnl::convolution_backward_data::desc desc(dnnl::algorithm::convolution_direct, src,
                                               any_weights, dst, strides, dilations, pad_before,
                                               pad_after_dims);
    dnnl::convolution_backward_data::primitive_desc pd(desc, attr, Engine(), forward);
    if (!IsFast(pd.impl_info_str())) return nullptr;
    plan->conv = StepOf<dnnl::convolution_backward_data>(pd);
    plan->weights = pd.weights_desc();
  } else {
    dnnl::convolution_backward_weights::desc desc(dnnl::algorithm::convolution_direct, src,
                                                  any_weights, dst, strides, dilations, pad_before,
                                                  pad_after_dims);
    dnnl::convolution_backward_weights::primitive_desc pd(desc, attr, Engine(), forward);
    if (!IsFast(pd.impl_info_str())) return nullptr;
    plan->conv = StepOf<dnnl::convolution_backward_weights>(pd);
    plan->weights = pd.diff_weights_desc();
  }
  plan->reorders_weights = plan->weights != plan->user_weights;
  if (plan->reorders_weights) {
    plan->weights_reorder = pass == Pass::kBackwardWeights
                                ? ReorderStep(plan->weights, plan->user_weights)
                                : ReorderStep(plan->user_weights, plan->weights);
  }
  return plan;
}

using PlanKey = std::array<int64_t, 16>;

PlanKey KeyOf(const ConvGeometry& g, Pass pass) {
  return {static_cast<int64_t>(pass),
          g.batch,
          g.in_h,
          g.in_w,
          g.in_c,
          g.k_h,
          g.k_w,
          g.out_c,
          g.out_h,
          g.out_w,
          g.stride_h,
          g.stride_w,
          g.dilation_h,
          g.dilation_w,
          g.pad_top,
          g.pad_left};
}

// Plans by geometry and pass, null for the ones oneDNN has no fast kernel for (so that is
// asked once). Bounded: a program that convolves ever new shapes starts over past kMaxPlans.
class PlanCache {
 public:
  std::shared_ptr<const Plan> Find(const ConvGeometry& g, Pass pass) {
    const PlanKey key = KeyOf(g, pass);
    {
      absl::MutexLock lock(&mu_);
      auto it = plans_.find(key);
      if (it != plans_.end()) return it->second;
    }
    // Made outside the lock: a first call can take milliseconds (kernel generation), and
    // two threads making the same plan at once only waste one. A geometry oneDNN rejects
    // is remembered as declined like one it has only a reference kernel for.
    std::shared_ptr<const Plan> plan;
    try {
      plan = MakePlan(g, pass);
    } catch (const dnnl::error&) {
      plan = nullptr;
    }
    absl::MutexLock lock(&mu_);
    if (plans_.size() >= kMaxPlans) plans_.clear();
    return plans_.try_emplace(key, std::move(plan)).first->second;
  }

 private:
  static constexpr size_t kMaxPlans = 256;
  absl::Mutex mu_;
  absl::flat_hash_map<PlanKey, std::shared_ptr<const Plan>> plans_ ABSL_GUARDED_BY(mu_);
};

PlanCache& Plans() {
  static auto* cache = new PlanCache;  // never destroyed: kernels may run during exit
  return *cache;
}

// Runs `step` with `args` and the thread's scratchpad.
void Run(const Step& step, std::unordered_map<int, memory> args) {
  std::vector<char>& scratchpad = Buffers().scratchpad;
  if (scratchpad.size() < step.scratchpad.get_size()) scratchpad.resize(step.scratchpad.get_size());
  args.emplace(DNNL_ARG_SCRATCHPAD, memory(step.scratchpad, Engine(), scratchpad.data()));
  step.primitive.execute(ThreadStream(), args);
  ThreadStream().wait();
}

// The plan's filter, in the thread's buffer when the convolution reads or writes it in
// another layout than the op's HWIO `user` tensor.
memory PlanWeights(const Plan& plan, float* user) {
  if (!plan.reorders_weights) return memory(plan.user_weights, Engine(), user);
  std::vector<float>& buffer = Buffers().weights;
  const size_t floats = (plan.weights.get_size() + sizeof(float) - 1) / sizeof(float);
  if (buffer.size() < floats) buffer.resize(floats);
  return memory(plan.weights, Engine(), buffer.data());
}

// The op's HWIO `filter` as the plan's convolution reads it: reordered into the thread's
// buffer, or the filter itself when the layouts agree.
memory FilterIn(const Plan& plan, const float* filter) {
  float* user = const_cast<float*>(filter);  // oneDNN takes void*; the filter is only read
  memory weights = PlanWeights(plan, user);
  if (plan.reorders_weights) {
    Run(plan.weights_reorder,
        {{DNNL_ARG_FROM, memory(plan.user_weights, Engine(), user)}, {DNNL_ARG_TO, weights}});
  }
  return weights;
}

// Runs `body` (which returns whether it ran the pass) with oneDNN's errors caught: a failed
// call is computed again by the caller, and said once in the log.
template <typename Body>
bool Guarded(const char* what, Body&& body) {
  // Plans are made here too: oneDNN sizes a kernel's work split by the threads it has then.
  OneOpenMpThread one_thread;
  try {
    return body();
  } catch (const dnnl::error& e) {
    static std::atomic<bool> said{false};
    if (!said.exchange(true)) {
      Log().warn("oneDNN convolution ({}) failed, the im2col kernel runs instead: {}", what,
                 e.what());
    }
    return false;
  }
}

bool Usable(const ConvGeometry& g) {
  return g.batch > 0 && g.in_h > 0 && g.in_w > 0 && g.in_c > 0 && g.k_h > 0 && g.k_w > 0 &&
         g.out_c > 0 && g.out_h > 0 && g.out_w > 0;
}

}  // namespace

bool ConvForward(const ConvGeometry& g, const float* input, const float* filter, float* output) {
  if (!Usable(g)) return false;
  return Guarded("forward", [&] {
    std::shared_ptr<const Plan> plan = Plans().Find(g, Pass::kForward);
    if (plan == nullptr) return false;
    memory weights = FilterIn(*plan, filter);
    Run(plan->conv, {{DNNL_ARG_SRC, memory(plan->src, Engine(), const_cast<float*>(input))},
                     {DNNL_ARG_WEIGHTS, weights},
                     {DNNL_ARG_DST, memory(plan->dst, Engine(), output)}});
    return true;
  });
}

bool ConvBackwardData(const ConvGeometry& g, const float* filter, const float* out_grad,
                      float* input_grad) {
  // With fewer input channels than a vector register holds floats, oneDNN's blocked kernel
  // computes mostly padding: 7.7 GFLOP/s for one channel, where im2col's product is faster.
  if (!Usable(g) || g.in_c < 8) return false;
  return Guarded("input gradient", [&] {
    std::shared_ptr<const Plan> plan = Plans().Find(g, Pass::kBackwardData);
    if (plan == nullptr) return false;
    memory weights = FilterIn(*plan, filter);
    Run(plan->conv, {{DNNL_ARG_DIFF_DST, memory(plan->dst, Engine(), const_cast<float*>(out_grad))},
                     {DNNL_ARG_WEIGHTS, weights},
                     {DNNL_ARG_DIFF_SRC, memory(plan->src, Engine(), input_grad)}});
    return true;
  });
}

bool ConvBackwardWeights(const ConvGeometry& g, const float* input, const float* out_grad,
                         float* filter_grad) {
  if (!Usable(g)) return false;
  return Guarded("filter gradient", [&] {
    std::shared_ptr<const Plan> plan = Plans().Find(g, Pass::kBackwardWeights);
    if (plan == nullptr) return false;
    memory weights = PlanWeights(*plan, filter_grad);
    Run(plan->conv, {{DNNL_ARG_SRC, memory(plan->src, Engine(), const_cast<float*>(input))},
                     {DNNL_ARG_DIFF_DST, memory(plan->dst, Engine(), const_cast<float*>(out_grad))},
                     {DNNL_ARG_DIFF_WEIGHTS, weights}});
    if (plan->reorders_weights) {
      Run(plan->weights_reorder,
          {{DNNL_ARG_FROM, weights},
           {DNNL_ARG_TO, memory(plan->user_weights, Engine(), filter_grad)}});
    }
    return true;
  });
}

}  // namespace tw::onednn
