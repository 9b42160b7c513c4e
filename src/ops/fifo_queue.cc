#include "src/ops/fifo_queue.h"

#include "absl/strings/str_join.h"

namespace tw {

const char* QueueKindName(QueueOrder::Kind kind) {
  switch (kind) {
    case QueueOrder::Kind::kPaddingFifo:
      return "PaddingFIFOQueue";
    case QueueOrder::Kind::kRandomShuffle:
      return "RandomShuffleQueue";
    case QueueOrder::Kind::kPriority:
      return "PriorityQueue";
    case QueueOrder::Kind::kFifo:
      break;
  }
  return "FIFOQueue";
}

FIFOQueueResource::FIFOQueueResource(std::string name, std::vector<DataType> types,
                                     std::vector<PartialShape> shapes, int64_t capacity,
                                     QueueOrder order)
    : name_(std::move(name)),
      types_(std::move(types)),
      shapes_(std::move(shapes)),
      capacity_(capacity),
      order_(order) {
  if (order_.seed == 0 && order_.seed2 == 0) {
    std::random_device entropy;
    random_.seed((static_cast<uint64_t>(entropy()) << 32) | entropy());
  } else {
    std::seed_seq sequence{
        static_cast<uint32_t>(order_.seed), static_cast<uint32_t>(order_.seed >> 32),
        static_cast<uint32_t>(order_.seed2), static_cast<uint32_t>(order_.seed2 >> 32)};
    random_.seed(sequence);
  }
}

bool FIFOQueueResource::CanTakeLocked() const {
  if (queue_.empty()) return false;
  if (order_.kind != QueueOrder::Kind::kRandomShuffle || closed_) return true;
  return static_cast<int64_t>(queue_.size()) > order_.min_after_dequeue;
}

FIFOQueueResource::Tuple FIFOQueueResource::TakeLocked() {
  size_t pick = 0;
  if (order_.kind == QueueOrder::Kind::kRandomShuffle) {
    pick = std::uniform_int_distribution<size_t>(0, queue_.size() - 1)(random_);
  } else if (order_.kind == QueueOrder::Kind::kPriority) {
    // The smallest priority, the earliest of equals (a linear scan: priority queues in
    // input pipelines are small).
    for (size_t i = 1; i < queue_.size(); ++i) {
      if (queue_[i][0].flat<int64_t>()[0] < queue_[pick][0].flat<int64_t>()[0]) pick = i;
    }
  }
  if (pick == 0) {
    Tuple t = std::move(queue_.front());
    queue_.pop_front();
    return t;
  }
  Tuple t = std::move(queue_[pick]);
  if (order_.kind == QueueOrder::Kind::kRandomShuffle) {
    queue_[pick] = std::move(queue_.back());  // order does not matter here
    queue_.pop_back();
  } else {
    queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(pick));
  }
  return t;
}

namespace {

// "[[2,3], [4]]", as TensorFlow lists a queue's component shapes.
std::string ShapeListString(const std::vector<PartialShape>& shapes) {
  std::vector<std::string> each;
  for (const PartialShape& s : shapes) each.push_back(s.DebugString());
  return "[" + absl::StrJoin(each, ", ") + "]";
}

// "float, int32", as TensorFlow lists a queue's component types.
std::string TypeListString(const std::vector<DataType>& types) {
  std::vector<std::string> each;
  for (DataType t : types) each.emplace_back(DataTypeName(t));
  return absl::StrJoin(each, ", ");
}

}  // namespace

Status FIFOQueueResource::MatchesSpec(const std::vector<DataType>& types,
                                      const std::vector<PartialShape>& shapes, int64_t capacity,
                                      QueueOrder order) const {
  if (!(order == order_)) {
    return errors::InvalidArgument(
        "Shared queue '", name_, "' is a ", QueueKindName(order_.kind),
        order_.kind == QueueOrder::Kind::kRandomShuffle
            ? " with min_after_dequeue " + std::to_string(order_.min_after_dequeue)
            : std::string(),
        " but a ", QueueKindName(order.kind),
        order.kind == QueueOrder::Kind::kRandomShuffle
            ? " with min_after_dequeue " + std::to_string(order.min_after_dequeue)
            : std::string(),
        " was requested");
  }
  if (capacity != capacity_) {
    return errors::InvalidArgument("Shared queue '", name_, "' has capacity ", capacity_,
                                   " but requested capacity was ", capacity);
  }
  if (types != types_) {
    return errors::InvalidArgument("Shared queue '", name_, "' has component types ",
                                   TypeListString(types_), " but requested component types were ",
                                   TypeListString(types));
  }
  if (shapes != shapes_) {
    return errors::InvalidArgument(
        "Shared queue '", name_, "' has component shapes ", ShapeListString(shapes_),
        " but requested component shapes were ", ShapeListString(shapes));
  }
  return OkStatus();
}

// The messages below are TensorFlow's (QueueBase), which its users' tests match.
Status FIFOQueueResource::ValidateComponentCountAndTypes(const Tuple& tuple) const {
  if (tuple.size() != types_.size()) {
    return errors::InvalidArgument("Wrong number of components in tuple. Expected ", types_.size(),
                                   ", got ", tuple.size());
  }
  for (size_t i = 0; i < tuple.size(); ++i) {
    if (tuple[i].dtype() != types_[i]) {
      return errors::InvalidArgument("Type mismatch in tuple component ", i, ". Expected ",
                                     DataTypeName(types_[i]), ", got ",
                                     DataTypeName(tuple[i].dtype()));
    }
  }
  return OkStatus();
}

Status FIFOQueueResource::ValidateTuple(const Tuple& tuple) const {
  TW_RETURN_IF_ERROR(ValidateComponentCountAndTypes(tuple));
  for (size_t i = 0; i < tuple.size() && !shapes_.empty(); ++i) {
    if (!shapes_[i].IsCompatibleWith(tuple[i].shape())) {
      return errors::InvalidArgument("Shape mismatch in tuple component ", i, ". Expected ",
                                     shapes_[i].DebugString(), ", got ",
                                     tuple[i].shape().DebugString());
    }
  }
  return OkStatus();
}

Status FIFOQueueResource::ValidateManyTuple(const Tuple& batch) const {
  TW_RETURN_IF_ERROR(ValidateComponentCountAndTypes(batch));
  if (batch.empty()) return errors::InvalidArgument("EnqueueMany needs at least one component");
  for (size_t i = 0; i < batch.size(); ++i) {
    if (batch[i].rank() < 1) {
      return errors::InvalidArgument("EnqueueMany needs components of rank >= 1; component ", i,
                                     " has shape ", batch[i].shape().DebugString());
    }
  }
  const int64_t n = batch[0].dim(0);
  for (size_t i = 0; i < batch.size(); ++i) {
    if (shapes_.empty()) {
      if (batch[i].dim(0) != n) {
        return errors::InvalidArgument(
            "All input tensors must have the same size in the 0th dimension. Component ", i,
            " has ", batch[i].dim(0), ", and should have ", n);
      }
      continue;
    }
    // Expected: [n] followed by the component's shape (of any rank when that is unknown).
    PartialShape expected = shapes_[i];
    if (!expected.unknown_rank) expected.dims.insert(expected.dims.begin(), n);
    const bool fits =
        expected.unknown_rank ? batch[i].dim(0) == n : expected.IsCompatibleWith(batch[i].shape());
    if (!fits) {
      return errors::InvalidArgument("Shape mismatch in tuple component ", i, ". Expected ",
                                     expected.DebugString(), ", got ",
                                     batch[i].shape().DebugString());
    }
  }
  return OkStatus();
}

void FIFOQueueResource::Enqueue(std::vector<Tuple> tuples, CancellationManager* cm,
                                EnqueueDone done) {
  auto a = std::make_unique<Attempt>();
  a->is_enqueue = true;
  a->pending.assign(std::make_move_iterator(tuples.begin()), std::make_move_iterator(tuples.end()));
  a->cm = cm;
  a->enqueue_done = std::move(done);
  Start(std::move(a));
}

void FIFOQueueResource::Dequeue(int64_t n, bool allow_partial, CancellationManager* cm,
                                DequeueDone done) {
  auto a = std::make_unique<Attempt>();
  a->wanted = n;
  a->allow_partial = allow_partial;
  a->cm = cm;
  a->dequeue_done = std::move(done);
  Start(std::move(a));
}

FIFOQueueResource::~FIFOQueueResource() {
  std::vector<Completion> done;
  {
    absl::MutexLock lock(&mu_);
    for (auto* line : {&enqueuers_, &dequeuers_}) {
      for (std::unique_ptr<Attempt>& a : *line) {
        done.push_back({std::move(a), errors::Cancelled(KindAndName(),
                                                        " was destroyed: its container was "
                                                        "cleared")});
      }
      line->clear();
    }
  }
  // The attempts' cancellation callbacks hold the queue weakly: any that still runs finds
  // it gone and does nothing.
  RunCompletions(std::move(done));
}

void FIFOQueueResource::Start(std::unique_ptr<Attempt> a) {
  std::vector<Completion> done;
  CancellationManager* cm = a->cm;
  int64_t id = 0;
  {
    absl::MutexLock lock(&mu_);
    id = a->id = next_id_++;
  }
  // Listen for the step's cancellation before the attempt is listed: once it is, another
  // thread may complete it, and the step (with `cm`) may end at any moment.
  bool cancelled = false;
  if (cm != nullptr) {
    a->token = cm->NewToken();
    std::weak_ptr<FIFOQueueResource> self = weak_from_this();
    cancelled = !cm->RegisterCallback(a->token, [self, id] {
      if (auto q = self.lock()) q->Cancel(id);
    });
  }
  {
    absl::MutexLock lock(&mu_);
    if (cancelled || (cm != nullptr && cm->IsCancelled())) {
      // The cancellation came before the attempt was listed, so its callback found nothing.
      Status cancelled_status = CancelledStatus(*a);
      done.push_back({std::move(a), std::move(cancelled_status)});
    } else if (a->is_enqueue && !a->is_close && closed_) {
      done.push_back({std::move(a), errors::Cancelled(KindAndName(), " is closed.")});
    } else {
      (a->is_enqueue ? enqueuers_ : dequeuers_).push_back(std::move(a));
      FlushLocked(&done);
    }
  }
  RunCompletions(std::move(done));
}

void FIFOQueueResource::Cancel(int64_t id) {
  std::vector<Completion> done;
  {
    absl::MutexLock lock(&mu_);
    std::unique_ptr<Attempt> a;
    for (auto* list : {&enqueuers_, &dequeuers_}) {
      for (auto it = list->begin(); it != list->end() && a == nullptr; ++it) {
        if ((*it)->id == id) {
          a = std::move(*it);
          list->erase(it);
          break;
        }
      }
    }
    if (a == nullptr) return;  // already completed
    // Elements a cancelled dequeue had taken go back to the front, in order.
    for (auto t = a->collected.rbegin(); t != a->collected.rend(); ++t) {
      queue_.push_front(std::move(*t));
    }
    a->collected.clear();
    Status cancelled_status = CancelledStatus(*a);
    done.push_back({std::move(a), std::move(cancelled_status)});
    FlushLocked(&done);
  }
  RunCompletions(std::move(done));
}

Status FIFOQueueResource::CancelledStatus(const Attempt& a) {
  return errors::Cancelled(a.is_close     ? "Close"
                           : a.is_enqueue ? "Enqueue"
                                          : "Dequeue",
                           " operation was cancelled");
}

void FIFOQueueResource::Close(bool cancel_pending_enqueues, CancellationManager* cm,
                              EnqueueDone done) {
  if (!cancel_pending_enqueues) {
    // In line with the enqueues: FlushLocked closes the queue when the close's turn comes.
    auto a = std::make_unique<Attempt>();
    a->is_enqueue = true;
    a->is_close = true;
    a->cm = cm;
    a->enqueue_done = std::move(done);
    Start(std::move(a));
    return;
  }
  std::vector<Completion> completions;
  {
    absl::MutexLock lock(&mu_);
    closed_ = true;
    for (auto& a : enqueuers_) {
      Status status =
          a->is_close ? AlreadyClosed() : errors::Cancelled(KindAndName(), " is closed.");
      completions.push_back({std::move(a), std::move(status)});
    }
    enqueuers_.clear();
    FlushLocked(&completions);
  }
  RunCompletions(std::move(completions));
  done(OkStatus());
}

bool FIFOQueueResource::AwaitWaiting(bool dequeues, size_t n, absl::Duration timeout) const {
  const auto* line = dequeues ? &dequeuers_ : &enqueuers_;
  struct Wait {
    const std::list<std::unique_ptr<Attempt>>* line;
    size_t n;
  } wait{line, n};
  absl::MutexLock lock(&mu_);
  return mu_.AwaitWithTimeout(absl::Condition(
                                  +[](Wait* w) { return w->line->size() >= w->n; }, &wait),
                              timeout);
}

int64_t FIFOQueueResource::size() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(queue_.size());
}

bool FIFOQueueResource::is_closed() const {
  absl::MutexLock lock(&mu_);
  return closed_;
}

void FIFOQueueResource::FlushLocked(std::vector<Completion>* done) {
  for (bool progress = true; progress;) {
    progress = false;
    while (!enqueuers_.empty()) {
      Attempt& a = *enqueuers_.front();
      if (a.is_close || closed_) {
        // Everything in line before it has been served: the close's turn. What waited
        // behind a close finds the queue closed.
        Status status = !a.is_close ? errors::Cancelled(KindAndName(), " is closed.")
                        : closed_   ? AlreadyClosed()
                                    : OkStatus();
        if (a.is_close) closed_ = true;
        done->push_back({std::move(enqueuers_.front()), std::move(status)});
        enqueuers_.pop_front();
        progress = true;
        continue;
      }
      while (!a.pending.empty() && !Full()) {
        queue_.push_back(std::move(a.pending.front()));
        a.pending.pop_front();
        progress = true;
      }
      if (!a.pending.empty()) break;
      done->push_back({std::move(enqueuers_.front()), OkStatus()});
      enqueuers_.pop_front();
      progress = true;
    }
    while (!dequeuers_.empty()) {
      Attempt& a = *dequeuers_.front();
      while (static_cast<int64_t>(a.collected.size()) < a.wanted && CanTakeLocked()) {
        a.collected.push_back(TakeLocked());
        progress = true;
      }
      const bool complete = static_cast<int64_t>(a.collected.size()) == a.wanted;
      const bool starved = closed_ && queue_.empty() && enqueuers_.empty();
      if (complete || (starved && a.allow_partial && !a.collected.empty())) {
        done->push_back({std::move(dequeuers_.front()), OkStatus()});
        dequeuers_.pop_front();
        progress = true;
      } else if (starved) {
        const size_t had = a.collected.size();
        for (auto t = a.collected.rbegin(); t != a.collected.rend(); ++t) {
          queue_.push_front(std::move(*t));
        }
        a.collected.clear();
        done->push_back({std::move(dequeuers_.front()),
                         errors::OutOfRange(KindAndName(),
                                            " is closed and has insufficient elements "
                                            "(requested ",
                                            a.wanted, ", current size ", had, ")")});
        dequeuers_.pop_front();
        progress = !queue_.empty();  // restored elements may serve the next (smaller) request
        if (progress) break;
      } else {
        break;
      }
    }
  }
}

void FIFOQueueResource::RunCompletions(std::vector<Completion> done) {
  for (Completion& c : done) {
    Attempt& a = *c.attempt;
    if (a.cm != nullptr) a.cm->DeregisterCallback(a.token);
    if (a.is_enqueue) {
      a.enqueue_done(c.status);
    } else if (c.status.ok()) {
      a.dequeue_done(std::move(a.collected));
    } else {
      a.dequeue_done(c.status);
    }
  }
}

}  // namespace tw
