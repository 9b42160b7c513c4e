// ReaderResource: TF 1.x's queue-based readers (tf.TFRecordReader, TextLineReader,
// FixedLengthRecordReader, WholeFileReader). A reader takes file names from a string queue
// one "work unit" at a time and produces (key, value) records from each file in turn.
//
// A read never holds a thread while it waits for a file name: it is kept with a callback
// on the queue's dequeue (fifo_queue.h) and continues when a name arrives, or fails with
// the queue's OutOfRange once the queue is closed and empty, or with Cancelled with its
// step. Reads of one reader are served one at a time, in the order they were asked for,
// as TensorFlow's ReaderBase serializes them.
//
// Thread-safe. Callbacks run on the thread that completed them, outside the reader's lock.
#ifndef TENSORWEAVE_SRC_OPS_READER_H_
#define TENSORWEAVE_SRC_OPS_READER_H_

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "src/framework/cancellation.h"
#include "src/framework/file_access.h"
#include "src/framework/resource_mgr.h"
#include "src/ops/fifo_queue.h"

namespace tw {

// How one kind of reader turns a file into records. Used by one read at a time.
class RecordSource {
 public:
  virtual ~RecordSource() = default;
  // Starts reading `file` (errors name it).
  virtual Status Open(const std::string& file) = 0;
  // The next record of the open file, or *at_end when it has none left.
  virtual Status Next(std::string* key, std::string* value, bool* at_end) = 0;
  // Forgets the open file.
  virtual void Close() = 0;
};

class ReaderResource : public ResourceBase, public std::enable_shared_from_this<ReaderResource> {
 public:
  static constexpr char kTypeName[] = "Reader";
  struct Records {
    std::vector<std::string> keys, values;
  };
  using ReadDone = std::function<void(StatusOr<Records>)>;

  // `kind` names the reader in messages ("TFRecordReader"); `source` reads its files.
  ReaderResource(std::string name, std::string kind, std::unique_ptr<RecordSource> source);

  std::string TypeName() const override { return kTypeName; }
  std::string DebugString() const override { return kind_ + " '" + name_ + "'"; }
  const std::string& kind() const { return kind_; }

  // Reads `n` >= 1 records (ReaderRead: n == 1, up_to false), or with `up_to` between 1 and
  // `n`, as many as the current file gives before it ends (ReaderReadUpTo). Takes file
  // names from `queue` (one string component) as files end, each checked against
  // `file_access`, which must stay valid until `done` runs (the step's policy). Errors: the queue's
  // (OutOfRange once closed and empty; records already taken in this read are lost, as in
  // TensorFlow), Cancelled with the step, the file's errors (NotFound, DataLoss, PermissionDenied)
  // naming it.
  void Read(int64_t n, bool up_to, std::shared_ptr<FIFOQueueResource> queue,
            CancellationManager* cm, const FileAccessPolicy* file_access, ReadDone done);

  int64_t num_records_produced() const { return records_produced_.load(); }
  int64_t num_work_units_completed() const { return work_units_completed_.load(); }
  // Forgets the current file and zeroes the counters. FailedPrecondition while a read is
  // being served (TensorFlow waits for it; a read may wait for a file name forever).
  Status Reset();

 private:
  struct Request {
    int64_t n = 1;
    bool up_to = false;
    std::shared_ptr<FIFOQueueResource> queue;
    CancellationManager* cm = nullptr;
    const FileAccessPolicy* file_access = nullptr;
    ReadDone done;
    Records out;
  };

  // Serves `request` and then the reads waiting behind it, until one parks on its queue.
  void Drain(std::unique_ptr<Request> request);
  // Runs `request` until it is done (true) or parked waiting for a file name (false).
  bool Serve(std::unique_ptr<Request>& request);
  // The next waiting read, or null (and not busy).
  std::unique_ptr<Request> NextRequest();

  const std::string name_;
  const std::string kind_;
  std::unique_ptr<RecordSource> source_;  // used only by the read being served
  bool has_work_ = false;                 // likewise: a file is open
  std::string work_;                      // the open file's name
  std::atomic<int64_t> records_produced_{0};
  std::atomic<int64_t> work_units_completed_{0};

  absl::Mutex mu_;
  bool busy_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<std::unique_ptr<Request>> waiting_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tw

#endif  // TENSORWEAVE_SRC_OPS_READER_H_
