#include "examples/wordcount_pipeline.h"

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensorweave/tensorweave.h"

namespace tw::examples {
namespace {

// One in-process server: state outlives each session, as on a cluster's task.
class PipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = Server::CreateLocal();
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
  }
  // An address, not "localhost": resolving a name goes through c-ares, whose allocations
  // the leak checker of the sanitizer build reports.
  SessionOptions Options() const {
    return {.target = "grpc://127.0.0.1:" + std::to_string(server_->port())};
  }

  std::unique_ptr<Server> server_;
};

// A round's queue of (index, path) as the maps read it: a batched dequeue and the size left.
struct Round {
  Round(const Scope& root, const std::string& name)
      : queue(
            ops::FIFOQueue(root, {DT_INT64, DT_STRING}, {.shapes = {{}, {}}, .shared_name = name})),
        all_indices(ops::Placeholder(root, DT_INT64)),
        all_names(ops::Placeholder(root, DT_STRING)),
        fill(ops::QueueEnqueueMany(root, queue, {all_indices, all_names})),
        close(ops::QueueClose(root, queue)),
        n(ops::Placeholder(root, DT_INT32)),
        taken(ops::QueueDequeueUpTo(root, queue, n)),
        left(ops::QueueSize(root.WithControlDependencies({taken[0].op()}), queue)) {}
  NameFetcher::Graph graph() const {
    return {.batch_size = n, .indices = taken[0], .names = taken[1], .left = left};
  }
  // Fills the queue with files 0..names.size()-1 and closes it, as reduce does.
  Status FillAndClose(RemakingSession& session, const std::vector<std::string>& names) const {
    std::vector<int64_t> indices(names.size());
    for (size_t i = 0; i < names.size(); ++i) indices[i] = static_cast<int64_t>(i);
    TW_RETURN_IF_ERROR(session
                           .Run({{all_indices, Tensor::FromVector(indices)},
                                 {all_names, Tensor::FromVector(names)}},
                                {}, {fill})
                           .status());
    return session.Run({}, {}, {close}).status();
  }

  ops::Queue queue;
  Output all_indices, all_names;
  Operation fill, close;
  Output n;
  std::vector<Output> taken;
  Output left;
};

TEST_F(PipelineTest, FetcherTakesEveryFileOnceInOrderInShrinkingBatches) {
  Scope root = Scope::NewRootScope();
  Round round(root, "round");
  RemakingSession session(root, Options());
  std::vector<std::string> names;
  for (int i = 0; i < 1000; ++i) names.push_back("file-" + std::to_string(i));
  ASSERT_TRUE(round.FillAndClose(session, names).ok());

  NameFetcher fetcher(&session, round.graph(), /*num_maps=*/2, /*max_batch=*/100,
                      absl::Seconds(10));
  std::vector<int64_t> got_indices;
  std::vector<std::string> got_names;
  std::vector<int64_t> sizes;
  while (true) {
    auto batch = fetcher.Next();
    if (IsOutOfRange(batch.status())) break;
    ASSERT_TRUE(batch.ok()) << batch.status();
    sizes.push_back(batch->indices.num_elements());
    for (int64_t i : batch->indices.flat<int64_t>()) got_indices.push_back(i);
    for (const std::string& name : batch->names.flat<std::string>()) got_names.push_back(name);
    ASSERT_LE(sizes.size(), 1000u);
  }
  ASSERT_EQ(got_indices.size(), names.size());
  for (size_t i = 0; i < got_indices.size(); ++i)
    EXPECT_EQ(got_indices[i], static_cast<int64_t>(i));
  EXPECT_EQ(got_names, names);
  // 1 (nothing known yet), then capped at 100, then a quarter of what is left, down to 1.
  ASSERT_GE(sizes.size(), 4u);
  EXPECT_EQ(sizes[0], 1);
  EXPECT_EQ(sizes[1], 100);
  EXPECT_EQ(sizes.back(), 1);
  EXPECT_TRUE(std::is_sorted(sizes.begin() + 1, sizes.end(), std::greater<>()));
  EXPECT_LT(sizes.size(), 40u);                        // far fewer round trips than files
  EXPECT_TRUE(IsOutOfRange(fetcher.Next().status()));  // and it stays at the end
}

TEST_F(PipelineTest, AKnownQueueSizeSizesTheFirstBatch) {
  Scope root = Scope::NewRootScope();
  Round round(root, "known");
  RemakingSession session(root, Options());
  ASSERT_TRUE(round.FillAndClose(session, std::vector<std::string>(40, "f")).ok());
  NameFetcher fetcher(&session, round.graph(), /*num_maps=*/2, /*max_batch=*/100, absl::Seconds(10),
                      /*known_left=*/40);
  auto first = fetcher.Next();
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->indices.num_elements(), 10);  // 40 / (2 * 2 maps), not 1
}

// A round's queue is full and closed before anyone dequeues; one that is open and empty
// (made anew by a restarted files task) must not hold a map for ever.
TEST_F(PipelineTest, AFetchFromAnOpenEmptyQueueTimesOut) {
  Scope root = Scope::NewRootScope();
  Round round(root, "never_filled");
  RemakingSession session(root, Options());
  NameFetcher fetcher(&session, round.graph(), 1, 10, absl::Milliseconds(200));
  auto batch = fetcher.Next();
  EXPECT_TRUE(IsDeadlineExceeded(batch.status())) << batch.status();
  EXPECT_TRUE(IsRetryable(batch.status()));
}

// The ledger's graph: two int64 vectors of `files` entries, written by ScatterUpdate.
struct Ledger {
  explicit Ledger(const Scope& root)
      : counts(ops::MakeVariable(root, "counts", DT_INT64, {-1})),
        bytes(ops::MakeVariable(root, "bytes", DT_INT64, {-1})),
        size(ops::Placeholder(root, DT_INT64)),
        init(ops::Group(root, {ops::Assign(root, counts, ops::Fill(root, size, kNotCounted),
                                           {.validate_shape = false})
                                   .op(),
                               ops::Assign(root, bytes, ops::Fill(root, size, int64_t{0}),
                                           {.validate_shape = false})
                                   .op()})),
        indices(ops::Placeholder(root, DT_INT64)),
        words(ops::Placeholder(root, DT_INT64)),
        byte_counts(ops::Placeholder(root, DT_INT64)),
        write(ops::Group(root, {ops::ScatterUpdate(root, counts, indices, words).op(),
                                ops::ScatterUpdate(root, bytes, indices, byte_counts).op()})),
        read_counts(ops::ReadVariable(root, counts)),
        read_bytes(ops::ReadVariable(root, bytes)) {}
  LedgerCommitter::Graph graph() const {
    return {.indices = indices, .words = words, .bytes = byte_counts, .write = write};
  }
  ops::Variable counts, bytes;
  Output size;
  Operation init;
  Output indices, words, byte_counts;
  Operation write;
  Output read_counts, read_bytes;
};

TEST_F(PipelineTest, EveryEntryReachesTheLedgerOnceWhateverTheRepeats) {
  Scope root = Scope::NewRootScope();
  Ledger ledger(root);
  RemakingSession session(root, Options());
  ASSERT_TRUE(
      session.Run({{ledger.size, Tensor::FromVector<int64_t>({1000})}}, {}, {ledger.init}).ok());
  LedgerCommitter committer(&session, ledger.graph());
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {  // both threads write every file: a count sent twice
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; i += 10) {
        std::vector<LedgerEntry> entries;
        for (int k = i; k < i + 10; ++k)
          entries.push_back({.index = k, .words = k, .bytes = 2 * k});
        committer.Add(entries);
      }
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_TRUE(committer.Flush(absl::Seconds(30)).ok());
  auto value = session.Run({}, {ledger.read_counts, ledger.read_bytes});
  ASSERT_TRUE(value.ok()) << value.status();
  int64_t words = 0, bytes = 0;
  for (int64_t c : (*value)[0].flat<int64_t>()) words += c;
  for (int64_t b : (*value)[1].flat<int64_t>()) bytes += b;
  EXPECT_EQ(words, 499500);  // 0 + 1 + ... + 999, once
  EXPECT_EQ(bytes, 2 * 499500);
}

// A reduce task restarting: its ledger is uninitialized for a while. The committer keeps
// the entries and writes them once the ledger is back.
TEST_F(PipelineTest, EntriesWaitForALedgerThatIsNotThereYet) {
  Scope root = Scope::NewRootScope();
  Ledger ledger(root);
  RemakingSession session(root, Options());
  LedgerCommitter committer(&session, ledger.graph(), absl::Milliseconds(10));
  committer.Add({{.index = 3, .words = 42, .bytes = 7}});
  EXPECT_TRUE(IsDeadlineExceeded(committer.Flush(absl::Milliseconds(100))));
  RemakingSession other(root, Options());
  ASSERT_TRUE(other.Run({{ledger.size, Tensor::FromVector<int64_t>({5})}}, {}, {ledger.init}).ok());
  ASSERT_TRUE(committer.Flush(absl::Seconds(30)).ok());
  auto value = other.Run({}, {ledger.read_counts});
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_THAT(
      std::vector<int64_t>((*value)[0].flat<int64_t>().begin(), (*value)[0].flat<int64_t>().end()),
      ::testing::ElementsAre(-1, -1, -1, 42, -1));
}

TEST_F(PipelineTest, FlushReportsAnEntryThatCanNeverBeWritten) {
  Scope root = Scope::NewRootScope();
  Ledger ledger(root);
  RemakingSession session(root, Options());
  ASSERT_TRUE(
      session.Run({{ledger.size, Tensor::FromVector<int64_t>({2})}}, {}, {ledger.init}).ok());
  LedgerCommitter committer(&session, ledger.graph());
  committer.Add({{.index = 5, .words = 1, .bytes = 1}});  // past the ledger's end
  Status s = committer.Flush(absl::Seconds(30));
  EXPECT_TRUE(IsInvalidArgument(s)) << s;
  EXPECT_THAT(s.message(), ::testing::HasSubstr("indices[0] = 5 is not in [0, 2)"));
}

TEST_F(PipelineTest, ClosingTheCommitterEndsFlushWithCancelled) {
  Scope root = Scope::NewRootScope();
  Ledger ledger(root);  // never initialized: the entry waits
  RemakingSession session(root, Options());
  LedgerCommitter committer(&session, ledger.graph(), absl::Milliseconds(10));
  committer.Add({{.index = 0, .words = 1, .bytes = 1}});
  committer.Close();
  EXPECT_TRUE(IsCancelled(committer.Flush(absl::Seconds(30))));
}

}  // namespace
}  // namespace tw::examples
