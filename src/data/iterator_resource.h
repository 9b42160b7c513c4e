// IteratorResource: a tf.data iterator held by a device's ResourceMgr (shared by name, or
// private to a session), the state behind Iterator, MakeIterator, OneShotIterator and
// IteratorGetNext (iterator_ops.cc).
//
// GetNext never holds a compute-pool thread: requests are served in order by one thread
// of the resource's own, which is where the pipeline's reading, parsing and functions run
// (and wait). A request whose step is cancelled ends at once with Cancelled; the element
// its GetNext produces afterwards is dropped.
//
// Thread-safe. Callbacks run on the resource's thread or the cancelling one.
#ifndef TENSORWEAVE_SRC_DATA_ITERATOR_RESOURCE_H_
#define TENSORWEAVE_SRC_DATA_ITERATOR_RESOURCE_H_

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "src/data/dataset.h"
#include "src/framework/cancellation.h"
#include "src/framework/resource_mgr.h"

namespace tw::data {

class IteratorResource : public ResourceBase {
 public:
  static constexpr char kTypeName[] = "Iterator";
  // OK and the element; OutOfRange "End of sequence" after the last; or the error.
  using GetNextDone = std::function<void(StatusOr<Element>)>;

  IteratorResource(std::string name, std::vector<DataType> types, std::vector<PartialShape> shapes);
  // Stops the thread; waiting requests end with Cancelled.
  ~IteratorResource() override;
  // Ends the pipeline (its threads run map functions on the device): later requests end
  // with Cancelled, as the destructor's.
  void StopWorkOnDevice() override;

  std::string TypeName() const override { return kTypeName; }
  std::string DebugString() const override { return "Iterator '" + name_ + "'"; }

  // InvalidArgument when an iterator of this name exists with other types or shapes.
  Status MatchesSpec(const std::vector<DataType>& types,
                     const std::vector<PartialShape>& shapes) const;
  // Starts over on the elements of the pipeline `def` over `inputs` (an initializer),
  // built with `ctx` (its inputs and seeds are the resource's). Requests already waiting
  // are served from the new iterator. BuildDataset's errors.
  Status Initialize(const proto::DatasetDef& def, std::vector<Tensor> inputs, BuildContext ctx);
  bool initialized() const;

  // Checkpoints. SaveState: where the iterator is, as a serialized proto::IteratorState
  // (the pipeline, its inputs, its seed, the elements produced so far); FailedPrecondition
  // before Initialize. RestoreState: rebuilds that pipeline and replays as many elements,
  // so that the next element is the one that would have followed the save. Exact for
  // deterministic pipelines (seeded or unseeded shuffles included; not random ops inside
  // map functions, nor from_generator's Python state). Takes time in proportion to the
  // position; `cancelled` is polled during the replay. InvalidArgument for bytes that
  // are not a state; FailedPrecondition when the pipeline ends before the position (its
  // files changed); the replay's errors other than InvalidArgument (a bad record, which
  // the original saw as well).
  StatusOr<std::string> SaveState() const;
  Status RestoreState(const std::string& state, BuildContext ctx,
                      const std::function<bool()>& cancelled);

  // The next element. FailedPrecondition "GetNext() failed because the iterator has not
  // been initialized..." before Initialize (TF's message); InvalidArgument when an element
  // does not have the iterator's types or shapes.
  void GetNext(CancellationManager* cm, GetNextDone done);

 private:
  struct Request {
    GetNextDone done;
    std::atomic<bool> finished{false};
    CancellationManager* cm = nullptr;
    CancellationManager::Token token = 0;
  };
  // One initialization: the pipeline, its iterator (used by the serving thread alone once
  // published) and how many elements that iterator has produced.
  struct Pipeline {
    proto::DatasetDef def;
    std::vector<Tensor> inputs;
    uint64_t seed_base = 0;
    std::shared_ptr<const DatasetBase> dataset;
    std::unique_ptr<IteratorBase> iterator;
    std::atomic<int64_t> position{0};
  };
  static StatusOr<std::shared_ptr<Pipeline>> Build(const proto::DatasetDef& def,
                                                   std::vector<Tensor> inputs, uint64_t seed_base,
                                                   BuildContext ctx);
  void Publish(std::shared_ptr<Pipeline> pipeline);
  void Serve();
  static void Finish(const std::shared_ptr<Request>& r, StatusOr<Element> result);
  Status CheckElement(const Element& e) const;

  const std::string name_;
  const std::vector<DataType> types_;
  const std::vector<PartialShape> shapes_;

  mutable absl::Mutex mu_;
  std::shared_ptr<Pipeline> pipeline_ ABSL_GUARDED_BY(mu_);
  std::deque<std::shared_ptr<Request>> requests_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_ ABSL_GUARDED_BY(mu_);  // started on the first GetNext
};

}  // namespace tw::data

#endif  // TENSORWEAVE_SRC_DATA_ITERATOR_RESOURCE_H_
