#include "src/data/iterator_resource.h"

#include <random>

#include "absl/strings/str_join.h"
#include "src/core/tensor_coding.h"

namespace tw::data {

IteratorResource::IteratorResource(std::string name, std::vector<DataType> types,
                                   std::vector<PartialShape> shapes)
    : name_(std::move(name)), types_(std::move(types)), shapes_(std::move(shapes)) {}

IteratorResource::~IteratorResource() { StopWorkOnDevice(); }

void IteratorResource::StopWorkOnDevice() {
  std::deque<std::shared_ptr<Request>> left;
  std::thread thread;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;  // no thread is started, nor pipeline published, after this
    left.swap(requests_);
    thread.swap(thread_);
  }
  if (thread.joinable()) thread.join();
  std::shared_ptr<Pipeline> pipeline;
  {
    absl::MutexLock lock(&mu_);
    pipeline.swap(pipeline_);
  }
  pipeline.reset();  // joins the pipeline's threads, outside the lock
  for (auto& r : left) {
    Finish(r, errors::Cancelled("Iterator '", name_,
                                "' was destroyed: its container was "
                                "cleared"));
  }
}

Status IteratorResource::MatchesSpec(const std::vector<DataType>& types,
                                     const std::vector<PartialShape>& shapes) const {
  if (types != types_ || shapes != shapes_) {
    return errors::InvalidArgument("Shared iterator '", name_,
                                   "' has other output types or shapes than requested");
  }
  return OkStatus();
}

StatusOr<std::shared_ptr<IteratorResource::Pipeline>> IteratorResource::Build(
    const proto::DatasetDef& def, std::vector<Tensor> inputs, uint64_t seed_base,
    BuildContext ctx) {
  auto p = std::make_shared<Pipeline>();
  p->def = def;
  p->inputs = std::move(inputs);
  p->seed_base = seed_base;
  ctx.inputs = &p->inputs;
  ctx.seeds = std::make_shared<SeedSource>(seed_base);
  TW_ASSIGN_OR_RETURN(p->dataset, BuildDataset(p->def, ctx));
  TW_ASSIGN_OR_RETURN(p->iterator, p->dataset->MakeIterator());
  return p;
}

void IteratorResource::Publish(std::shared_ptr<Pipeline> pipeline) {
  absl::MutexLock lock(&mu_);
  // The old pipeline goes when the last holder (this, or the serving thread) lets go; a
  // stopped iterator takes none.
  if (!stopping_) pipeline_.swap(pipeline);
}

Status IteratorResource::Initialize(const proto::DatasetDef& def, std::vector<Tensor> inputs,
                                    BuildContext ctx) {
  std::random_device entropy;
  const uint64_t seed_base = (static_cast<uint64_t>(entropy()) << 32) | entropy();
  TW_ASSIGN_OR_RETURN(auto pipeline, Build(def, std::move(inputs), seed_base, std::move(ctx)));
  Publish(std::move(pipeline));
  return OkStatus();
}

bool IteratorResource::initialized() const {
  absl::MutexLock lock(&mu_);
  return pipeline_ != nullptr;
}

StatusOr<std::string> IteratorResource::SaveState() const {
  std::shared_ptr<Pipeline> p;
  {
    absl::MutexLock lock(&mu_);
    p = pipeline_;
  }
  if (p == nullptr) {
    return errors::FailedPrecondition("Iterator '", name_,
                                      "' cannot be saved: it has not been initialized");
  }
  proto::IteratorState state;
  *state.mutable_dataset() = p->def;
  for (const Tensor& t : p->inputs) TensorToProto(t, state.add_inputs());
  state.set_seed_base(p->seed_base);
  state.set_position(p->position.load());
  return state.SerializeAsString();
}

Status IteratorResource::RestoreState(const std::string& bytes, BuildContext ctx,
                                      const std::function<bool()>& cancelled) {
  proto::IteratorState state;
  if (!state.ParseFromString(bytes) || state.position() < 0) {
    return errors::InvalidArgument("Iterator '", name_,
                                   "': the checkpoint holds no iterator state for it");
  }
  std::vector<Tensor> inputs;
  for (const proto::TensorProto& t : state.inputs()) {
    TW_ASSIGN_OR_RETURN(Tensor input, TensorFromProto(t));
    inputs.push_back(std::move(input));
  }
  TW_ASSIGN_OR_RETURN(auto p,
                      Build(state.dataset(), std::move(inputs), state.seed_base(), std::move(ctx)));
  for (int64_t i = 0; i < state.position(); ++i) {
    if (i % 1024 == 0 && cancelled && cancelled()) {
      return errors::Cancelled("restoring iterator '", name_, "' was cancelled");
    }
    Element skipped;
    bool end = false;
    Status s = p->iterator->GetNext(&skipped, &end);
    if (end) {
      return errors::FailedPrecondition("Iterator '", name_,
                                        "' cannot be restored: the checkpoint's position ",
                                        state.position(), " is past the end of its dataset (", i,
                                        " elements); did its input change since the checkpoint?");
    }
    if (!s.ok() && !IsInvalidArgument(s)) return s;
  }
  p->position.store(state.position());
  Publish(std::move(p));
  return OkStatus();
}

void IteratorResource::Finish(const std::shared_ptr<Request>& r, StatusOr<Element> result) {
  if (r->finished.exchange(true)) return;  // the step's cancellation came first
  if (r->cm != nullptr) r->cm->DeregisterCallback(r->token);
  r->done(std::move(result));
}

void IteratorResource::GetNext(CancellationManager* cm, GetNextDone done) {
  auto r = std::make_shared<Request>();
  r->done = std::move(done);
  r->cm = cm;
  if (cm != nullptr) {
    r->token = cm->NewToken();
    std::weak_ptr<Request> weak = r;
    const bool registered = cm->RegisterCallback(r->token, [weak] {
      if (auto request = weak.lock()) {
        if (!request->finished.exchange(true)) {
          request->done(errors::Cancelled("GetNext operation was cancelled"));
        }
      }
    });
    if (!registered) {
      Finish(r, errors::Cancelled("GetNext operation was cancelled"));
      return;
    }
  }
  {
    absl::MutexLock lock(&mu_);
    if (!stopping_) {
      requests_.push_back(std::move(r));
      if (!thread_.joinable()) thread_ = std::thread([this] { Serve(); });
      return;
    }
  }
  Finish(r, errors::Cancelled("Iterator '", name_, "' is stopped: its device is going"));
}

Status IteratorResource::CheckElement(const Element& e) const {
  if (e.size() != types_.size()) {
    return errors::InvalidArgument("Iterator '", name_, "' expects elements of ", types_.size(),
                                   " components, the dataset gives ", e.size());
  }
  for (size_t i = 0; i < e.size(); ++i) {
    if (e[i].dtype() != types_[i]) {
      return errors::InvalidArgument("Iterator '", name_, "': component ", i, " is ",
                                     DataTypeName(e[i].dtype()), " but the iterator expects ",
                                     DataTypeName(types_[i]));
    }
    if (i < shapes_.size() && !shapes_[i].IsCompatibleWith(e[i].shape())) {
      return errors::InvalidArgument("Iterator '", name_, "': component ", i, " has shape ",
                                     e[i].shape().DebugString(), " but the iterator expects ",
                                     shapes_[i].DebugString());
    }
  }
  return OkStatus();
}

void IteratorResource::Serve() {
  while (true) {
    std::shared_ptr<Request> r;
    std::shared_ptr<Pipeline> p;
    {
      absl::MutexLock lock(&mu_);
      auto work = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || !requests_.empty();
      };
      mu_.Await(absl::Condition(&work));
      if (stopping_) return;
      r = std::move(requests_.front());
      requests_.pop_front();
      p = pipeline_;
    }
    if (r->finished.load()) continue;  // cancelled while it waited: no element taken
    if (p == nullptr) {
      Finish(r, errors::FailedPrecondition(
                    "GetNext() failed because the iterator has not been initialized. Ensure "
                    "that you have run the initializer operation for this iterator before "
                    "getting the next element."));
      continue;
    }
    Element element;
    bool end = false;
    Status s = p->iterator->GetNext(&element, &end);
    // Failed calls count too: a replay from a checkpoint repeats them.
    if (!end) p->position.fetch_add(1);
    if (s.ok() && end) s = errors::OutOfRange("End of sequence");
    if (s.ok()) s = CheckElement(element);
    if (s.ok()) {
      Finish(r, std::move(element));
    } else {
      Finish(r, std::move(s));
    }
  }
}

}  // namespace tw::data
