#include "examples/wordcount_pipeline.h"

#include <algorithm>
#include <utility>

namespace tw::examples {

NameFetcher::NameFetcher(ClientSession* session, Graph graph, int num_maps, int64_t max_batch)
    : session_(session),
      graph_(std::move(graph)),
      num_maps_(num_maps),
      max_batch_(max_batch),
      thread_([this] { Loop(); }) {}

NameFetcher::~NameFetcher() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

void NameFetcher::Loop() {
  int64_t n = 1;  // nothing is known about the queue before the first dequeue
  while (true) {
    {
      // One batch ahead: fetch the next only once the consumer has taken the last.
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(this, &NameFetcher::SlotFreeOrStopping));
      if (stop_) return;
    }
    auto batch =
        session_->Run({{graph_.batch_size, Tensor::Scalar<int32_t>(static_cast<int32_t>(n))}},
                      {graph_.names, graph_.left});
    absl::MutexLock lock(&mu_);
    if (!batch.ok()) {
      slot_ = batch.status();  // OutOfRange at the end, or a real error: either way, stop
      return;
    }
    const int64_t left = (*batch)[1].scalar<int32_t>();
    n = std::clamp<int64_t>((left + 2 * num_maps_ - 1) / (2 * num_maps_), 1, max_batch_);
    slot_ = std::move((*batch)[0]);
  }
}

StatusOr<Tensor> NameFetcher::Next() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(this, &NameFetcher::SlotFull));
  StatusOr<Tensor> batch = *slot_;
  if (batch.ok()) slot_.reset();
  return batch;
}

CountAdder::CountAdder(ClientSession* session, Graph graph)
    : session_(session), graph_(std::move(graph)), thread_([this] { Loop(); }) {}

CountAdder::~CountAdder() {
  Finish().IgnoreError();
  thread_.join();
}

void CountAdder::Add(int64_t words) {
  absl::MutexLock lock(&mu_);
  pending_ += words;
}

void CountAdder::Loop() {
  while (true) {
    int64_t words = 0;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(this, &CountAdder::WorkOrFinishing));
      if (pending_ == 0) {  // finishing, and all is added
        done_ = true;
        return;
      }
      words = std::exchange(pending_, 0);
    }
    auto added = session_->Run({{graph_.count, Tensor::Scalar<int64_t>(words)}}, {}, {graph_.add});
    if (!added.ok()) {
      absl::MutexLock lock(&mu_);
      status_ = added.status();
      done_ = true;
      return;
    }
  }
}

Status CountAdder::Finish() {
  absl::MutexLock lock(&mu_);
  finishing_ = true;
  mu_.Await(absl::Condition(&done_));
  return status_;
}

}  // namespace tw::examples
