#include "src/data/iterator_resource.h"

#include "absl/strings/str_join.h"

namespace tw::data {

IteratorResource::IteratorResource(std::string name, std::vector<DataType> types,
                                   std::vector<PartialShape> shapes)
    : name_(std::move(name)), types_(std::move(types)), shapes_(std::move(shapes)) {}

IteratorResource::~IteratorResource() {
  std::deque<std::shared_ptr<Request>> left;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    left.swap(requests_);
  }
  if (thread_.joinable()) thread_.join();
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

Status IteratorResource::Initialize(std::shared_ptr<const DatasetBase> dataset) {
  TW_ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> it, dataset->MakeIterator());
  std::shared_ptr<IteratorBase> old;
  absl::MutexLock lock(&mu_);
  old = std::move(iterator_);  // released outside the lock if the thread does not hold it
  iterator_ = std::move(it);
  dataset_ = std::move(dataset);
  return OkStatus();
}

bool IteratorResource::initialized() const {
  absl::MutexLock lock(&mu_);
  return iterator_ != nullptr;
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
  absl::MutexLock lock(&mu_);
  requests_.push_back(std::move(r));
  if (!thread_.joinable()) thread_ = std::thread([this] { Serve(); });
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
    std::shared_ptr<IteratorBase> it;
    {
      absl::MutexLock lock(&mu_);
      auto work = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || !requests_.empty();
      };
      mu_.Await(absl::Condition(&work));
      if (stopping_) return;
      r = std::move(requests_.front());
      requests_.pop_front();
      it = iterator_;
    }
    if (r->finished.load()) continue;  // cancelled while it waited: no element taken
    if (it == nullptr) {
      Finish(r, errors::FailedPrecondition(
                    "GetNext() failed because the iterator has not been initialized. Ensure "
                    "that you have run the initializer operation for this iterator before "
                    "getting the next element."));
      continue;
    }
    Element element;
    bool end = false;
    Status s = it->GetNext(&element, &end);
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
