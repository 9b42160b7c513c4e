#include "src/ops/conditional_accumulator.h"

#include "src/base/logging.h"
#include "src/ops/cwise.h"

namespace tw {

ConditionalAccumulatorResource::ConditionalAccumulatorResource(std::string name, DataType dtype,
                                                               PartialShape shape,
                                                               Reduction reduction)
    : name_(std::move(name)),
      dtype_(dtype),
      declared_shape_(shape),
      reduction_(reduction),
      shape_(std::move(shape)) {}

ConditionalAccumulatorResource::~ConditionalAccumulatorResource() {
  // Nobody else can reach the accumulator now, so no lock is needed; the waiting steps must
  // not hang.
  std::vector<Completion> done;
  for (auto& t : takers_) {
    done.push_back({std::move(t), errors::Aborted("ConditionalAccumulator '", name_,
                                                  "' was destroyed while a take waited")});
  }
  takers_.clear();
  RunCompletions(std::move(done));
}

StatusOr<ConditionalAccumulatorResource::Reduction> ConditionalAccumulatorResource::ParseReduction(
    const std::string& s) {
  if (s == "MEAN") return Reduction::kMean;
  if (s == "SUM") return Reduction::kSum;
  return errors::InvalidArgument("reduction_type must be \"MEAN\" or \"SUM\", got \"", s, "\"");
}

Status ConditionalAccumulatorResource::MatchesSpec(DataType dtype, const PartialShape& shape,
                                                   Reduction reduction) const {
  if (dtype != dtype_) {
    return errors::InvalidArgument("Shared accumulator '", name_, "' has dtype ",
                                   DataTypeName(dtype_), " but requested dtype was ",
                                   DataTypeName(dtype));
  }
  if (!(shape == declared_shape_)) {
    return errors::InvalidArgument("Shared accumulator '", name_, "' has shape ",
                                   declared_shape_.DebugString(), " but requested shape was ",
                                   shape.DebugString());
  }
  if (reduction != reduction_) {
    return errors::InvalidArgument("Shared accumulator '", name_, "' has reduction ",
                                   reduction_ == Reduction::kMean ? "MEAN" : "SUM",
                                   " but requested reduction was ",
                                   reduction == Reduction::kMean ? "MEAN" : "SUM");
  }
  return OkStatus();
}

Status ConditionalAccumulatorResource::ApplyGradient(int64_t local_step, const Tensor& gradient) {
  if (gradient.dtype() != dtype_) {
    return errors::InvalidArgument("accumulator '", name_, "' holds ", DataTypeName(dtype_),
                                   " gradients, got ", DataTypeName(gradient.dtype()));
  }
  std::vector<Completion> done;
  {
    absl::MutexLock lock(&mu_);
    if (!shape_.IsCompatibleWith(gradient.shape())) {
      return errors::InvalidArgument("accumulator '", name_, "' has shape ", shape_.DebugString(),
                                     ", got a gradient of shape ", gradient.shape().DebugString());
    }
    if (local_step < global_step_) {
      Log().debug("accumulator '{}' dropped a stale gradient (local step {} < global step {})",
                  name_, local_step, global_step_);
      return OkStatus();
    }
    if (count_ == 0) {
      // A copy: the input's buffer may belong to a Const kernel or a feed, and the sum is
      // updated in place.
      sum_ = gradient.Copy();
      if (shape_.unknown_rank || shape_.dims != gradient.shape().dims()) {
        shape_ = PartialShape::Of(gradient.shape().dims());  // the first gradient fixes it
      }
    } else {
      void* sum = sum_.raw_data();  // the lambda is not seen to run under the lock
      Dispatch(FloatTypes{}, dtype_, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const auto n = static_cast<Eigen::Index>(gradient.num_elements());
        MutArray<T>(static_cast<T*>(sum), n) += ConstArray<T>(gradient.flat<T>().data(), n);
      });
    }
    ++count_;
    FlushLocked(&done);
  }
  RunCompletions(std::move(done));
  return OkStatus();
}

void ConditionalAccumulatorResource::TakeGradient(int32_t num_required, CancellationManager* cm,
                                                  TakeDone done_cb) {
  if (num_required < 1) {
    done_cb(errors::InvalidArgument("num_required for accumulator '", name_, "' must be >= 1, got ",
                                    num_required));
    return;
  }
  auto taker = std::make_unique<Taker>();
  taker->num_required = num_required;
  taker->cm = cm;
  taker->done = std::move(done_cb);
  int64_t id = 0;
  {
    absl::MutexLock lock(&mu_);
    id = taker->id = next_id_++;
  }
  // Listen for the step's cancellation before the take is listed: once it is, an apply on
  // another thread may complete it, and the step (with `cm`) may end at any moment.
  bool cancelled = false;
  if (cm != nullptr) {
    taker->token = cm->NewToken();
    std::weak_ptr<ConditionalAccumulatorResource> self = weak_from_this();
    cancelled = !cm->RegisterCallback(taker->token, [self, id] {
      if (auto acc = self.lock()) acc->Cancel(id);
    });
  }
  std::vector<Completion> done;
  {
    absl::MutexLock lock(&mu_);
    if (cancelled || (cm != nullptr && cm->IsCancelled())) {
      // The cancellation came before the take was listed, so its callback found nothing.
      done.push_back({std::move(taker),
                      errors::Cancelled("AccumulatorTakeGradient on '", name_, "' was cancelled")});
    } else {
      takers_.push_back(std::move(taker));
      FlushLocked(&done);
    }
  }
  RunCompletions(std::move(done));
}

void ConditionalAccumulatorResource::Cancel(int64_t id) {
  std::vector<Completion> done;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = takers_.begin(); it != takers_.end(); ++it) {
      if ((*it)->id == id) {
        done.push_back({std::move(*it), errors::Cancelled("AccumulatorTakeGradient on '", name_,
                                                          "' was cancelled")});
        takers_.erase(it);
        break;
      }
    }
    // A cancelled take may have blocked smaller ones behind it.
    FlushLocked(&done);
  }
  RunCompletions(std::move(done));
}

void ConditionalAccumulatorResource::SetGlobalStep(int64_t step) {
  absl::MutexLock lock(&mu_);
  if (step < global_step_) {
    Log().debug("accumulator '{}' keeps global step {}, ignoring the older {}", name_, global_step_,
                step);
    return;
  }
  global_step_ = step;
}

void ConditionalAccumulatorResource::Reset(int64_t step) {
  absl::MutexLock lock(&mu_);
  global_step_ = step;
}

int32_t ConditionalAccumulatorResource::num_accumulated() const {
  absl::MutexLock lock(&mu_);
  return count_;
}

int64_t ConditionalAccumulatorResource::global_step() const {
  absl::MutexLock lock(&mu_);
  return global_step_;
}

void ConditionalAccumulatorResource::FlushLocked(std::vector<Completion>* done) {
  while (!takers_.empty() && count_ >= takers_.front()->num_required) {
    Tensor result = std::move(sum_);
    sum_ = Tensor();
    if (reduction_ == Reduction::kMean) {
      const int32_t count = count_;
      Dispatch(FloatTypes{}, dtype_, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const auto n = static_cast<Eigen::Index>(result.num_elements());
        MutArray<T>(result.flat<T>().data(), n) /= static_cast<T>(count);
      });
    }
    count_ = 0;
    ++global_step_;
    done->push_back({std::move(takers_.front()), std::move(result)});
    takers_.pop_front();
  }
}

void ConditionalAccumulatorResource::RunCompletions(std::vector<Completion> done) {
  for (Completion& c : done) {
    Taker& t = *c.taker;
    if (t.cm != nullptr) t.cm->DeregisterCallback(t.token);
    t.done(std::move(c.result));
  }
}

}  // namespace tw
