// ConditionalAccumulatorResource: sums gradients of one dtype and shape for synchronous
// training, held by a device's ResourceMgr and shared by name.
//
// Each worker applies its gradient tagged with the global step it was computed at; the chief
// takes the mean (or sum) once enough fresh gradients arrived. Gradients older than the
// accumulator's global step are stale and dropped. A take waits without holding a thread:
// it is kept in the accumulator with a callback, completed by the apply that brings the
// count to what it needs, or by the step's cancellation.
#ifndef TENSORWEAVE_SRC_OPS_CONDITIONAL_ACCUMULATOR_H_
#define TENSORWEAVE_SRC_OPS_CONDITIONAL_ACCUMULATOR_H_

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "src/framework/attr_value.h"
#include "src/framework/cancellation.h"
#include "src/framework/resource_mgr.h"

namespace tw {

// Thread-safe. Callbacks run outside the accumulator's lock, on the thread that completed
// them (an ApplyGradient, a TakeGradient, a cancellation, or the destructor).
class ConditionalAccumulatorResource
    : public ResourceBase,
      public std::enable_shared_from_this<ConditionalAccumulatorResource> {
 public:
  static constexpr char kTypeName[] = "ConditionalAccumulator";
  enum class Reduction { kMean, kSum };
  using TakeDone = std::function<void(StatusOr<Tensor>)>;

  // dtype is DT_FLOAT or DT_DOUBLE; `shape` may be partially known (the first applied
  // gradient then fixes it).
  ConditionalAccumulatorResource(std::string name, DataType dtype, PartialShape shape,
                                 Reduction reduction);
  // Fails pending takes with Aborted.
  ~ConditionalAccumulatorResource() override;

  std::string TypeName() const override { return kTypeName; }
  std::string DebugString() const override { return "ConditionalAccumulator '" + name_ + "'"; }
  const std::string& name() const { return name_; }
  DataType dtype() const { return dtype_; }

  // "MEAN" or "SUM"; InvalidArgument naming the attribute otherwise.
  static StatusOr<Reduction> ParseReduction(const std::string& s);

  // InvalidArgument naming the accumulator when it was created with another dtype, shape
  // or reduction.
  Status MatchesSpec(DataType dtype, const PartialShape& shape, Reduction reduction) const;

  // Adds `gradient` unless local_step is below the global step (then it is dropped and OK is
  // returned). InvalidArgument when the dtype or shape does not match. May complete a
  // waiting take, whose callback then runs on this thread before the call returns.
  Status ApplyGradient(int64_t local_step, const Tensor& gradient);

  // Calls `done` with the mean (or sum) of the gradients once at least `num_required`
  // (>= 1) are accumulated, then resets the sum and count and advances the global step by
  // one. Takes are served in the order they started. `done` gets Cancelled when `cm`
  // (may be null) cancels the wait; the accumulator then keeps its gradients.
  void TakeGradient(int32_t num_required, CancellationManager* cm, TakeDone done);

  // Raises the global step to `step`; a smaller value is ignored (the step never moves back).
  void SetGlobalStep(int64_t step);
  // Sets the global step to `step`, even below the current one (for a model restored from
  // an older checkpoint). Gradients already accumulated stay.
  void Reset(int64_t step);

  int32_t num_accumulated() const;
  int64_t global_step() const;

 private:
  struct Taker {
    int64_t id = 0;
    int32_t num_required = 0;
    CancellationManager* cm = nullptr;
    CancellationManager::Token token = 0;
    TakeDone done;
  };
  struct Completion {
    std::unique_ptr<Taker> taker;
    StatusOr<Tensor> result;
  };

  // Serves waiting takes, in order, as far as the count allows.
  void FlushLocked(std::vector<Completion>* done) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Cancel(int64_t id);
  static void RunCompletions(std::vector<Completion> done);

  const std::string name_;
  const DataType dtype_;
  const PartialShape declared_shape_;  // as created, for MatchesSpec
  const Reduction reduction_;

  mutable absl::Mutex mu_;
  PartialShape shape_ ABSL_GUARDED_BY(mu_);  // declared_shape_, then the first gradient's
  int64_t global_step_ ABSL_GUARDED_BY(mu_) = 0;
  int32_t count_ ABSL_GUARDED_BY(mu_) = 0;
  Tensor sum_ ABSL_GUARDED_BY(mu_);  // uninitialized while count_ == 0
  int64_t next_id_ ABSL_GUARDED_BY(mu_) = 0;
  std::list<std::unique_ptr<Taker>> takers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tw

#endif  // TENSORWEAVE_SRC_OPS_CONDITIONAL_ACCUMULATOR_H_
