// Tests of the queue-based readers (reader.h, reader_ops.cc): each kind against files
// written here, TensorFlow's keys, the end of input (OutOfRange once the file queue is
// closed), a read that waits for a file name, ReadUpTo and the counters. (The allowed
// directories of a task reached over the network: reader_remote_test.cc.)
#include "tensorweave/ops/reader_ops.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/io/record_writer.h"
#include "src/ops/array_test_util.h"
#include "tensorweave/ops/basic_ops.h"
#include "tensorweave/session.h"

namespace tw {
namespace {

using ::testing::HasSubstr;
using testing::Vec;

std::string Message(const Status& s) { return std::string(s.message()); }

class ReaderOpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = std::filesystem::temp_directory_path().string() + "/tw_reader_XXXXXX";
    ASSERT_NE(mkdtemp(templ.data()), nullptr);
    dir_ = templ;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string WriteRecords(const std::string& name, const std::vector<std::string>& records,
                           io::Compression compression = io::Compression::kNone) {
    const std::string path = dir_ + "/" + name;
    auto writer = io::RecordWriter::Create(path, {.compression = compression});
    EXPECT_TRUE(writer.ok()) << writer.status();
    for (const auto& r : records) EXPECT_TRUE((*writer)->Write(r).ok());
    EXPECT_TRUE((*writer)->Close().ok());
    return path;
  }
  std::string WriteFile(const std::string& name, const std::string& bytes) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }

  // Runs `read` until OutOfRange after filling and closing a queue of `files`; returns
  // "key=value" per record.
  std::vector<std::string> ReadAll(const Scope& root, const ops::Queue& queue,
                                   const ops::ReadResult& read,
                                   const std::vector<std::string>& files,
                                   ClientSession* shared_session = nullptr) {
    auto enqueue = ops::QueueEnqueueMany(root, queue, {Vec<std::string>(files)});
    auto close = ops::QueueClose(root, queue);
    EXPECT_TRUE(root.status().ok()) << root.status();
    std::optional<ClientSession> own;
    if (shared_session == nullptr) own.emplace(root);
    ClientSession& session = shared_session != nullptr ? *shared_session : *own;
    Status filled = session.Run({}, {}, {enqueue}).status();
    if (filled.ok()) filled = session.Run({}, {}, {close}).status();
    EXPECT_TRUE(filled.ok()) << filled;
    std::vector<std::string> got;
    for (int i = 0; i < 1000; ++i) {
      auto out = session.Run({}, {read.key, read.value});
      if (!out.ok()) {
        EXPECT_TRUE(IsOutOfRange(out.status())) << out.status();
        last_error_ = out.status();
        break;
      }
      for (int64_t j = 0; j < (*out)[0].num_elements(); ++j) {
        got.push_back((*out)[0].flat<std::string>()[j] + "=" + (*out)[1].flat<std::string>()[j]);
      }
    }
    return got;
  }

  std::string dir_;
  Status last_error_;
};

TEST_F(ReaderOpsTest, TFRecordReaderReadsPlainAndCompressedFilesInQueueOrder) {
  const std::string a = WriteRecords("a.tfrecord", {"a0", "a1"});
  const std::string b = WriteRecords("b.tfrecord.gz", {"b0"}, io::Compression::kGzip);
  Scope root = Scope::NewRootScope();
  auto plain_queue = ops::FIFOQueue(root, {DT_STRING});
  auto gzip_queue = ops::FIFOQueue(root, {DT_STRING});
  auto plain = ops::TFRecordReader(root);
  auto gzip = ops::TFRecordReader(root, "GZIP");
  auto plain_read = ops::ReaderRead(root, plain, plain_queue);
  auto counts_op = std::vector<Output>{ops::ReaderNumRecordsProduced(root, plain),
                                       ops::ReaderNumWorkUnitsCompleted(root, plain)};
  auto reset = ops::ReaderReset(root, plain);
  ClientSession session(root);
  EXPECT_EQ(ReadAll(root, plain_queue, plain_read, {a, a}, &session),
            (std::vector<std::string>{a + ":0=a0", a + ":18=a1", a + ":0=a0", a + ":18=a1"}));
  EXPECT_THAT(Message(last_error_), HasSubstr("is closed and has insufficient elements"));
  EXPECT_EQ(ReadAll(root, gzip_queue, ops::ReaderRead(root, gzip, gzip_queue), {b}),
            (std::vector<std::string>{b + ":0=b0"}));

  auto counts = session.Run({}, counts_op);
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_EQ((*counts)[0].scalar<int64_t>(), 4);
  EXPECT_EQ((*counts)[1].scalar<int64_t>(), 2);
  ASSERT_TRUE(session.Run({}, {}, {reset}).ok());
  counts = session.Run({}, counts_op);
  EXPECT_EQ((*counts)[0].scalar<int64_t>(), 0);
}

TEST_F(ReaderOpsTest, TextLineReaderSkipsHeadersAndCountsLinesFromOne) {
  const std::string f = WriteFile("lines.csv", "name,size\r\nshirt,3\r\n\nboot,9");
  Scope root = Scope::NewRootScope();
  auto queue = ops::FIFOQueue(root, {DT_STRING});
  auto reader = ops::TextLineReader(root, /*skip_header_lines=*/1);
  EXPECT_EQ(ReadAll(root, queue, ops::ReaderRead(root, reader, queue), {f}),
            (std::vector<std::string>{f + ":2=shirt,3", f + ":3=", f + ":4=boot,9"}));
}

TEST_F(ReaderOpsTest, FixedLengthReaderHonoursHeaderFooterAndHop) {
  const std::string f = WriteFile("fixed.bin", "HHabcdefgFF");
  Scope root = Scope::NewRootScope();
  auto q1 = ops::FIFOQueue(root, {DT_STRING});
  auto q2 = ops::FIFOQueue(root, {DT_STRING});
  auto packed = ops::FixedLengthRecordReader(root, 3, {.header_bytes = 2, .footer_bytes = 2});
  auto hopping = ops::FixedLengthRecordReader(root, 3, {.header_bytes = 2, .hop_bytes = 2});
  // 7 bytes between header and footer: two records of 3, the partial last one dropped.
  EXPECT_EQ(ReadAll(root, q1, ops::ReaderRead(root, packed, q1), {f}),
            (std::vector<std::string>{f + ":0=abc", f + ":1=def"}));
  EXPECT_EQ(ReadAll(root, q2, ops::ReaderRead(root, hopping, q2), {f}),
            (std::vector<std::string>{f + ":0=abc", f + ":1=cde", f + ":2=efg", f + ":3=gFF"}));
}

TEST_F(ReaderOpsTest, WholeFileReaderAndReadUpToStayWithinAFile) {
  const std::string x = WriteFile("x.txt", "whole\ncontents");
  const std::string r = WriteRecords("r.tfrecord", {"0", "1", "2", "3", "4"});
  Scope root = Scope::NewRootScope();
  auto q1 = ops::FIFOQueue(root, {DT_STRING});
  auto whole = ops::WholeFileReader(root);
  EXPECT_EQ(ReadAll(root, q1, ops::ReaderRead(root, whole, q1), {x}),
            (std::vector<std::string>{x + "=whole\ncontents"}));

  auto q2 = ops::FIFOQueue(root, {DT_STRING});
  auto records = ops::TFRecordReader(root);
  auto up_to = ops::ReaderReadUpTo(root, records, q2, Tensor::Scalar<int64_t>(2));
  auto enqueue = ops::QueueEnqueueMany(root, q2, {Vec<std::string>({r, r})});
  ClientSession session(root);
  ASSERT_TRUE(session.Run({}, {}, {enqueue}).ok());
  std::vector<int64_t> sizes;
  for (int i = 0; i < 6; ++i) {
    auto out = session.Run({}, {up_to.value});
    ASSERT_TRUE(out.ok()) << out.status();
    sizes.push_back((*out)[0].num_elements());
  }
  // 2, 2, then the file's last record alone: a read never spans two files.
  EXPECT_EQ(sizes, (std::vector<int64_t>{2, 2, 1, 2, 2, 1}));
}

TEST_F(ReaderOpsTest, AReadWaitsForAFileNameAndMissingFilesAreNamed) {
  const std::string f = WriteRecords("late.tfrecord", {"late"});
  Scope root = Scope::NewRootScope();
  auto queue = ops::FIFOQueue(root, {DT_STRING});
  auto reader = ops::TFRecordReader(root);
  auto read = ops::ReaderRead(root, reader, queue);
  auto name = ops::Placeholder(root, DT_STRING);
  auto enqueue = ops::QueueEnqueue(root, queue, {name});
  ClientSession session(root, {.num_threads = 1});
  StatusOr<std::vector<Tensor>> waited = errors::Unknown("not run");
  // With one pool thread, the enqueue can run only if the waiting read holds none.
  std::thread reading([&] { waited = session.Run({}, {read.value}); });
  ASSERT_TRUE(session.Run({{name, Tensor::Scalar(f)}}, {}, {enqueue}).ok());
  reading.join();
  ASSERT_TRUE(waited.ok()) << waited.status();
  EXPECT_EQ((*waited)[0].scalar<std::string>(), "late");

  ASSERT_TRUE(session.Run({{name, Tensor::Scalar(dir_ + "/missing")}}, {}, {enqueue}).ok());
  auto missing = session.Run({}, {read.value});
  EXPECT_TRUE(IsNotFound(missing.status())) << missing.status();
  EXPECT_THAT(Message(missing.status()), HasSubstr(dir_ + "/missing"));
}

}  // namespace
}  // namespace tw
