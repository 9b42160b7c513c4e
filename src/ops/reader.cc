#include "src/ops/reader.h"

namespace tw {

ReaderResource::ReaderResource(std::string name, std::string kind,
                               std::unique_ptr<RecordSource> source)
    : name_(std::move(name)), kind_(std::move(kind)), source_(std::move(source)) {}

void ReaderResource::Read(int64_t n, bool up_to, std::shared_ptr<FIFOQueueResource> queue,
                          CancellationManager* cm, const FileAccessPolicy* file_access,
                          ReadDone done) {
  auto request = std::make_unique<Request>();
  request->n = n;
  request->up_to = up_to;
  request->queue = std::move(queue);
  request->cm = cm;
  request->file_access = file_access;
  request->done = std::move(done);
  {
    absl::MutexLock lock(&mu_);
    if (busy_) {
      waiting_.push_back(std::move(request));
      return;
    }
    busy_ = true;
  }
  Drain(std::move(request));
}

std::unique_ptr<ReaderResource::Request> ReaderResource::NextRequest() {
  absl::MutexLock lock(&mu_);
  if (waiting_.empty()) {
    busy_ = false;
    return nullptr;
  }
  auto next = std::move(waiting_.front());
  waiting_.pop_front();
  return next;
}

void ReaderResource::Drain(std::unique_ptr<Request> request) {
  while (request != nullptr) {
    if (!Serve(request)) return;  // parked; its callback drains on
    request = NextRequest();
  }
}

bool ReaderResource::Serve(std::unique_ptr<Request>& request) {
  auto finish = [&](Status status) {
    ReadDone done = std::move(request->done);
    Records out = std::move(request->out);
    request.reset();
    if (status.ok()) {
      done(std::move(out));
    } else {
      done(std::move(status));
    }
    return true;
  };
  while (true) {
    if (!has_work_) {
      Request* r = request.release();
      std::shared_ptr<FIFOQueueResource> queue = r->queue;
      // The reader stays alive while a read waits on its queue, even if its container goes.
      queue->Dequeue(1, false, r->cm,
                     [this, self = shared_from_this(),
                      r](StatusOr<std::vector<FIFOQueueResource::Tuple>> got) {
                       std::unique_ptr<Request> parked(r);
                       Status status = got.status();
                       if (status.ok()) {
                         const Tensor& name = (*got)[0][0];
                         if (name.dtype() != DT_STRING || name.num_elements() != 1) {
                           status = errors::InvalidArgument(
                               kind_, " '", name_,
                               "' expects its queue to hold file names (strings), "
                               "got ",
                               name.DebugString());
                         } else {
                           work_ = name.flat<std::string>()[0];
                           status = parked->file_access->Check(work_, "input file");
                           if (status.ok()) status = source_->Open(work_);
                           has_work_ = status.ok();
                         }
                       }
                       if (!status.ok()) {
                         ReadDone done = std::move(parked->done);
                         parked.reset();
                         done(std::move(status));
                         Drain(NextRequest());
                         return;
                       }
                       Drain(std::move(parked));
                     });
      return false;
    }
    std::string key, value;
    bool at_end = false;
    int64_t produced = 0;
    Records& out = request->out;
    while (static_cast<int64_t>(out.keys.size()) < request->n) {
      Status status = source_->Next(&key, &value, &at_end);
      if (!status.ok()) {
        // A file that cannot be read is done with; the next read starts on the next file.
        source_->Close();
        has_work_ = false;
        work_units_completed_.fetch_add(1);
        return finish(std::move(status));
      }
      if (at_end) break;
      out.keys.push_back(std::move(key));
      out.values.push_back(std::move(value));
      ++produced;
    }
    records_produced_.fetch_add(produced);
    if (at_end) {
      source_->Close();
      has_work_ = false;
      work_units_completed_.fetch_add(1);
    }
    const int64_t have = static_cast<int64_t>(out.keys.size());
    if (have == request->n || (request->up_to && have > 0)) return finish(OkStatus());
  }
}

Status ReaderResource::Reset() {
  absl::MutexLock lock(&mu_);
  if (busy_) {
    return errors::FailedPrecondition(kind_, " '", name_,
                                      "' cannot be reset while a read is being served");
  }
  if (has_work_) source_->Close();
  has_work_ = false;
  work_.clear();
  records_produced_.store(0);
  work_units_completed_.store(0);
  return OkStatus();
}

}  // namespace tw
