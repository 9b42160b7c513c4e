#include "examples/wordcount_pipeline.h"

#include <algorithm>
#include <utility>

namespace tw::examples {

NameFetcher::NameFetcher(RemakingSession* session, Graph graph, int num_maps, int64_t max_batch,
                         absl::Duration timeout, std::optional<int64_t> known_left)
    : session_(session),
      graph_(std::move(graph)),
      num_maps_(num_maps),
      max_batch_(max_batch),
      timeout_(timeout),
      // Without a size, 1: nothing is known about the queue before the first dequeue.
      thread_([this, first_n = known_left ? BatchSize(*known_left) : 1] { Loop(first_n); }) {}

int64_t NameFetcher::BatchSize(int64_t left) const {
  return std::clamp<int64_t>((left + 2 * num_maps_ - 1) / (2 * num_maps_), 1, max_batch_);
}

NameFetcher::~NameFetcher() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

void NameFetcher::Loop(int64_t first_n) {
  int64_t n = first_n;
  while (true) {
    {
      // One batch ahead: fetch the next only once the consumer has taken the last.
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(this, &NameFetcher::SlotFreeOrStopping));
      if (stop_) return;
    }
    auto batch =
        session_->Run({{graph_.batch_size, Tensor::Scalar<int32_t>(static_cast<int32_t>(n))}},
                      {graph_.indices, graph_.names, graph_.left}, {}, {.timeout = timeout_});
    absl::MutexLock lock(&mu_);
    if (!batch.ok()) {
      slot_ = batch.status();  // OutOfRange at the end, or a real error: either way, stop
      return;
    }
    n = BatchSize((*batch)[2].scalar<int32_t>());
    slot_ = Batch{.indices = std::move((*batch)[0]), .names = std::move((*batch)[1])};
  }
}

StatusOr<NameFetcher::Batch> NameFetcher::Next() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(this, &NameFetcher::SlotFull));
  StatusOr<Batch> batch = *slot_;
  if (batch.ok()) slot_.reset();
  return batch;
}

LedgerCommitter::LedgerCommitter(RemakingSession* session, Graph graph,
                                 absl::Duration retry_interval)
    : session_(session),
      graph_(std::move(graph)),
      retry_interval_(retry_interval),
      thread_([this] { Loop(); }) {}

LedgerCommitter::~LedgerCommitter() {
  Close();
  thread_.join();
}

void LedgerCommitter::Add(const std::vector<LedgerEntry>& entries) {
  absl::MutexLock lock(&mu_);
  pending_.insert(pending_.end(), entries.begin(), entries.end());
}

void LedgerCommitter::Loop() {
  while (true) {
    std::vector<LedgerEntry> entries;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(this, &LedgerCommitter::WorkOrClosing));
      if (closing_) {
        if (status_.ok()) status_ = errors::Cancelled("the ledger committer was closed");
        return;
      }
      entries = std::exchange(pending_, {});
      in_flight_ = entries.size();
    }
    std::vector<int64_t> indices, words, bytes;
    for (const LedgerEntry& e : entries) {
      indices.push_back(e.index);
      words.push_back(e.words);
      bytes.push_back(e.bytes);
    }
    auto written = session_->Run({{graph_.indices, Tensor::FromVector(indices)},
                                  {graph_.words, Tensor::FromVector(words)},
                                  {graph_.bytes, Tensor::FromVector(bytes)}},
                                 {}, {graph_.write});
    {
      absl::MutexLock lock(&mu_);
      in_flight_ = 0;
      if (written.ok()) continue;
      if (!IsRetryable(written.status())) {
        status_ = written.status();
        return;
      }
      // Kept, ahead of what came since, for the next attempt on a remade session.
      pending_.insert(pending_.begin(), entries.begin(), entries.end());
      if (mu_.AwaitWithTimeout(absl::Condition(&closing_), retry_interval_)) continue;
    }
    session_->Remake();
  }
}

Status LedgerCommitter::Flush(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  if (!mu_.AwaitWithTimeout(absl::Condition(this, &LedgerCommitter::Settled), timeout)) {
    return errors::DeadlineExceeded(pending_.size() + in_flight_,
                                    " ledger entries are not written yet");
  }
  return status_;
}

void LedgerCommitter::Close() {
  absl::MutexLock lock(&mu_);
  closing_ = true;
}

}  // namespace tw::examples
