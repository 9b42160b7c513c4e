// EventFileWriter (tensorweave/summary.h) read back with EventFileReader.
#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/summary/event_file_reader.h"
#include "tensorweave/summary.h"

namespace tw {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string Message(const Status& s) { return std::string(s.message()); }

std::string ScalarSummary(const std::string& tag, float value) {
  proto::Summary s;
  auto* v = s.add_value();
  v->set_tag(tag);
  v->set_simple_value(value);
  return s.SerializeAsString();
}

std::vector<proto::Event> ReadAll(const std::string& path) {
  std::vector<proto::Event> events;
  auto reader = summary::EventFileReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return events;
  while (true) {
    auto event = (*reader)->Next();
    if (IsOutOfRange(event.status())) break;
    EXPECT_TRUE(event.ok()) << event.status();
    if (!event.ok()) break;
    events.push_back(*std::move(event));
  }
  return events;
}

class EventFileWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = std::filesystem::temp_directory_path().string() + "/tw_events_XXXXXX";
    ASSERT_NE(mkdtemp(templ.data()), nullptr);
    dir_ = templ;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(EventFileWriterTest, FirstRecordIsTheFileVersion) {
  const double before = absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch());
  auto writer = EventFileWriter::Create(dir_ + "/run1");
  ASSERT_TRUE(writer.ok()) << writer.status();
  const std::string name = std::filesystem::path((*writer)->path()).filename().string();
  EXPECT_THAT(name, StartsWith("events.out.tfevents."));
  EXPECT_EQ((*writer)->path(), dir_ + "/run1/" + name);
  // Readable at once, before any flush.
  auto events = ReadAll((*writer)->path());
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].file_version(), "brain.Event:2");
  EXPECT_GE(events[0].wall_time(), std::floor(before));
  EXPECT_THAT(name,
              HasSubstr("." + std::to_string(static_cast<int64_t>(events[0].wall_time())) + "."));
}

TEST_F(EventFileWriterTest, SummariesComeBackWithTheirSteps) {
  auto writer = EventFileWriter::Create(dir_, {.filename_suffix = ".train"});
  ASSERT_TRUE(writer.ok());
  EXPECT_THAT((*writer)->path(), testing::EndsWith(".train"));
  ASSERT_TRUE((*writer)->AddSummary(ScalarSummary("loss", 2.5f), 10).ok());
  ASSERT_TRUE((*writer)->AddSummary(ScalarSummary("loss", 1.25f), 20).ok());
  ASSERT_TRUE((*writer)->Close().ok());
  auto events = ReadAll((*writer)->path());
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[1].step(), 10);
  EXPECT_EQ(events[1].summary().value(0).tag(), "loss");
  EXPECT_EQ(events[1].summary().value(0).simple_value(), 2.5f);
  EXPECT_EQ(events[2].step(), 20);
  EXPECT_EQ(events[2].summary().value(0).simple_value(), 1.25f);
  EXPECT_GE(events[2].wall_time(), events[0].wall_time());
}

TEST_F(EventFileWriterTest, AddScalarWritesOneSimpleValue) {
  auto writer = EventFileWriter::Create(dir_);
  ASSERT_TRUE((*writer)->AddScalar("global_step/sec", 12.5f, 300).ok());
  ASSERT_TRUE((*writer)->Flush().ok());
  auto events = ReadAll((*writer)->path());
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].step(), 300);
  ASSERT_EQ(events[1].summary().value_size(), 1);
  EXPECT_EQ(events[1].summary().value(0).tag(), "global_step/sec");
  EXPECT_EQ(events[1].summary().value(0).simple_value(), 12.5f);
}

TEST_F(EventFileWriterTest, GraphKeepsTheFieldsTensorFlowShares) {
  proto::GraphDef graph;
  proto::NodeDef* node = graph.add_node();
  node->set_name("add");
  node->set_op("Add");
  node->add_input("x");
  node->add_input("y");
  node->set_device("/job:worker/task:0");
  (*node->mutable_attr())["T"].set_i(1);
  auto writer = EventFileWriter::Create(dir_);
  ASSERT_TRUE((*writer)->AddGraph(graph, 3).ok());
  ASSERT_TRUE((*writer)->AddSessionLog(proto::SessionLog::START, 4).ok());
  ASSERT_TRUE((*writer)->Close().ok());
  auto events = ReadAll((*writer)->path());
  ASSERT_EQ(events.size(), 3u);
  proto::GraphDef written;
  ASSERT_TRUE(written.ParseFromString(events[1].graph_def()));
  ASSERT_EQ(written.node_size(), 1);
  EXPECT_EQ(written.node(0).name(), "add");
  EXPECT_EQ(written.node(0).op(), "Add");
  EXPECT_EQ(written.node(0).input_size(), 2);
  EXPECT_EQ(written.node(0).device(), "/job:worker/task:0");
  EXPECT_TRUE(written.node(0).attr().empty());
  EXPECT_EQ(events[1].step(), 3);
  EXPECT_EQ(events[2].session_log().status(), proto::SessionLog::START);
  EXPECT_EQ(events[2].step(), 4);
}

TEST_F(EventFileWriterTest, PendingEventsReachTheFileAtMaxQueue) {
  auto writer = EventFileWriter::Create(dir_, {.max_queue = 3});
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->AddSummary(ScalarSummary("a", 1), 1).ok());
  ASSERT_TRUE((*writer)->AddSummary(ScalarSummary("a", 2), 2).ok());
  EXPECT_EQ(ReadAll((*writer)->path()).size(), 1u);  // still buffered
  ASSERT_TRUE((*writer)->AddSummary(ScalarSummary("a", 3), 3).ok());
  EXPECT_EQ(ReadAll((*writer)->path()).size(), 4u);
  ASSERT_TRUE((*writer)->AddSummary(ScalarSummary("a", 4), 4).ok());
  ASSERT_TRUE((*writer)->Flush().ok());
  EXPECT_EQ(ReadAll((*writer)->path()).size(), 5u);
}

TEST_F(EventFileWriterTest, PendingEventsOlderThanFlushSecsGoWithTheNextEvent) {
  // A zero flush_secs makes every event old enough: each is written through at once.
  auto writer =
      EventFileWriter::Create(dir_, {.max_queue = 100, .flush_secs = absl::ZeroDuration()});
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->AddSummary(ScalarSummary("a", 1), 1).ok());
  EXPECT_EQ(ReadAll((*writer)->path()).size(), 2u);
  ASSERT_TRUE((*writer)->AddSummary(ScalarSummary("a", 2), 2).ok());
  EXPECT_EQ(ReadAll((*writer)->path()).size(), 3u);
}

TEST_F(EventFileWriterTest, TwoWritersInOneSecondGetTwoFiles) {
  // Files of this second's name (and the next two, should the clock tick meanwhile) exist
  // already: the writer takes the name with ".1" and leaves them as they were.
  char host[256] = {};
  ASSERT_EQ(gethostname(host, sizeof(host) - 1), 0);
  const int64_t now = absl::ToUnixSeconds(absl::Now());
  for (int64_t s = now; s < now + 3; ++s) {
    std::ofstream(absl::StrFormat("%s/events.out.tfevents.%010d.%s", dir_, s, host)) << "keep";
  }
  auto writer = EventFileWriter::Create(dir_);
  ASSERT_TRUE(writer.ok()) << writer.status();
  EXPECT_THAT((*writer)->path(), testing::EndsWith(std::string(host) + ".1"));
  auto files = summary::ListEventFiles(dir_);
  ASSERT_TRUE(files.ok());
  EXPECT_EQ(files->size(), 4u);
  for (const std::string& f : *files) {
    if (f == (*writer)->path()) continue;
    std::ifstream in(f);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "keep") << f;
  }
}

TEST_F(EventFileWriterTest, BadInputIsAnErrorNamingTheFile) {
  auto writer = EventFileWriter::Create(dir_);
  ASSERT_TRUE(writer.ok());
  Status s = (*writer)->AddSummary("\xff\xff not a proto", 7);
  EXPECT_TRUE(IsInvalidArgument(s)) << s;
  EXPECT_THAT(Message(s), HasSubstr((*writer)->path()));
  EXPECT_THAT(Message(s), HasSubstr("step 7"));
  ASSERT_TRUE((*writer)->Close().ok());
  s = (*writer)->AddSummary(ScalarSummary("a", 1), 1);
  EXPECT_TRUE(IsFailedPrecondition(s)) << s;
  EXPECT_THAT(Message(s), HasSubstr("is closed"));
  EXPECT_TRUE((*writer)->Close().ok());

  EXPECT_TRUE(IsInvalidArgument(EventFileWriter::Create("").status()));
  EXPECT_TRUE(
      IsInvalidArgument(EventFileWriter::Create(dir_, {.filename_suffix = "a/b"}).status()));
  // A logdir below a regular file cannot be made.
  std::filesystem::path file = std::filesystem::path(dir_) / "plain";
  { std::ofstream(file) << "x"; }
  auto bad = EventFileWriter::Create(file.string() + "/sub");
  EXPECT_FALSE(bad.ok());
  EXPECT_THAT(Message(bad.status()), HasSubstr(file.string()));
}

TEST_F(EventFileWriterTest, ConcurrentWritersLoseNoEvent) {
  auto writer = EventFileWriter::Create(dir_);
  ASSERT_TRUE(writer.ok());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        EXPECT_TRUE((*writer)->AddSummary(ScalarSummary("t" + std::to_string(t), i), i).ok());
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_TRUE((*writer)->Close().ok());
  EXPECT_EQ(ReadAll((*writer)->path()).size(), 1u + 4 * 50);
}

TEST_F(EventFileWriterTest, CorruptedEventFileIsDataLossNamingFileAndOffset) {
  std::string path;
  {
    auto writer = EventFileWriter::Create(dir_);
    ASSERT_TRUE((*writer)->AddSummary(ScalarSummary("loss", 1), 1).ok());
    path = (*writer)->path();
  }  // the destructor closes
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  bytes[bytes.size() - 6] ^= 0x40;  // inside the second record's data
  { std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes; }
  auto reader = summary::EventFileReader::Open(path);
  ASSERT_TRUE((*reader)->Next().ok());
  auto bad = (*reader)->Next();
  EXPECT_TRUE(IsDataLoss(bad.status())) << bad.status();
  EXPECT_THAT(Message(bad.status()), HasSubstr(path));
  EXPECT_THAT(Message(bad.status()), HasSubstr("byte offset "));
}

}  // namespace
}  // namespace tw
