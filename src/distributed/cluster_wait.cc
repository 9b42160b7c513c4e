#include "src/distributed/cluster_wait.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_join.h"
#include "src/base/logging.h"

namespace tw {

std::shared_ptr<ClusterWait> ClusterWait::Create(WorkerCache* workers, std::set<std::string> tasks,
                                                 Options options) {
  return std::make_shared<ClusterWait>(workers, std::move(tasks), options);
}

ClusterWait::ClusterWait(WorkerCache* workers, std::set<std::string> tasks, Options options)
    : workers_(workers), options_(options), waiting_(std::move(tasks)) {}

void ClusterWait::Run(Done done) {
  std::weak_ptr<ClusterWait> weak = weak_from_this();
  bool cancelled_before_run = false;
  {
    absl::MutexLock lock(&mu_);
    running_ = true;
    cancelled_before_run = ended_;
    if (!ended_) {
      done_ = std::move(done);
      const absl::Time now = absl::Now();
      deadline_ = now + options_.wait;
      next_log_ = now + options_.log_interval;
      deadline_timer_ = TimerQueue::Default()->Schedule(deadline_, [weak] {
        if (auto self = weak.lock()) {
          Status give_up;
          {
            absl::MutexLock self_lock(&self->mu_);
            give_up = self->GiveUp();
          }
          self->Finish(give_up);
        }
      });
    }
  }
  if (cancelled_before_run) {
    Result result = [&] {
      absl::MutexLock lock(&mu_);
      in_done_ = true;
      return *std::move(early_result_);
    }();
    CallDone(std::move(done), std::move(result));
    return;
  }
  StartRound();
}

Status ClusterWait::GiveUp() const {
  return errors::Unavailable("CreateSession gave up after ", absl::FormatDuration(options_.wait),
                             " waiting for ", absl::StrJoin(waiting_, ", "));
}

void ClusterWait::StartRound() {
  // One request and response per call, alive until its callback has run.
  struct Call {
    proto::GetStatusRequest request;
    proto::GetStatusResponse response;
  };
  absl::MutexLock round(&round_mu_);
  std::vector<std::string> tasks;
  {
    absl::MutexLock lock(&mu_);
    if (ended_) return;
    tasks.assign(waiting_.begin(), waiting_.end());
    replies_pending_ = static_cast<int>(tasks.size());
  }
  if (tasks.empty()) {
    Finish(std::vector<proto::DeviceAttributes>());
    return;
  }
  for (const std::string& task : tasks) {
    auto worker = workers_->GetWorker(task);
    if (!worker.ok()) {
      Finish(worker.status());
      return;
    }
    auto call = std::make_shared<Call>();
    (*worker)->GetStatusAsync(&call->request, &call->response,
                              [self = shared_from_this(), task, call](const Status& s) {
                                self->OnReply(task, s, call->response);
                              });
  }
}

void ClusterWait::OnReply(const std::string& task, const Status& status,
                          const proto::GetStatusResponse& response) {
  std::optional<std::vector<proto::DeviceAttributes>> all;
  {
    absl::MutexLock lock(&mu_);
    if (ended_) return;
    --replies_pending_;
    if (status.ok()) {
      devices_.insert(devices_.end(), response.device().begin(), response.device().end());
      waiting_.erase(task);
    }
    if (replies_pending_ > 0) return;
    if (waiting_.empty()) {
      all = std::move(devices_);
    } else {
      const absl::Time now = absl::Now();
      if (now >= next_log_) {
        Log().info("CreateSession still waiting for response from {}",
                   absl::StrJoin(waiting_, ", "));
        next_log_ = now + options_.log_interval;
      }
      // The deadline timer ends the wait; a round that would start after it is pointless.
      const absl::Time next = std::min(now + backoff_, deadline_);
      backoff_ = std::min(backoff_ * 2, absl::Seconds(1));
      std::weak_ptr<ClusterWait> weak = weak_from_this();
      round_timer_ = TimerQueue::Default()->Schedule(next, [weak] {
        if (auto self = weak.lock()) self->StartRound();
      });
    }
  }
  if (all) Finish(*std::move(all));
}

void ClusterWait::Finish(Result result) {
  Done done;
  TimerQueue::Id timers[2];
  {
    absl::MutexLock lock(&mu_);
    if (ended_) return;
    ended_ = true;
    if (!running_) {
      early_result_ = std::move(result);
      return;
    }
    done = std::move(done_);
    in_done_ = true;
    timers[0] = deadline_timer_;
    timers[1] = round_timer_;
  }
  // Outside the lock: a timer that is running waits for mu_ and then sees ended_.
  for (TimerQueue::Id id : timers) {
    if (id != 0) TimerQueue::Default()->Cancel(id);
  }
  CallDone(std::move(done), std::move(result));
}

void ClusterWait::CallDone(Done done, Result result) {
  done(std::move(result));
  absl::MutexLock lock(&mu_);
  in_done_ = false;
}

void ClusterWait::Cancel(const Status& reason) {
  Finish(reason);
  // A round in progress may still be reading the worker cache; wait for it to end (later
  // rounds see ended_ and do nothing).
  { absl::MutexLock round(&round_mu_); }
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](bool* in_done) { return !*in_done; }, &in_done_));
}

}  // namespace tw
