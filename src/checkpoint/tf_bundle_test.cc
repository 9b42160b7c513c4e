// TensorFlow checkpoints whose index LevelDB's own TableBuilder writes with its default
// options (Snappy-compressed blocks, as TensorFlow's table options default to), read by
// CheckpointReader. python/tests/test_tf_checkpoint.py writes them byte by byte from the
// published formats instead.
#include "src/checkpoint/tf_bundle.h"

#include <unistd.h>

#include <fstream>
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "leveldb/env.h"
#include "leveldb/options.h"
#include "leveldb/table_builder.h"
#include "src/base/crc32c.h"
#include "src/checkpoint/checkpoint_reader.h"
#include "tensorweave/protobuf/tensor_bundle.pb.h"

namespace tw::checkpoint {
namespace {

class TfBundleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    prefix_ = ::testing::TempDir() + "/tf_bundle_" + std::to_string(getpid()) + "_" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name();
  }

  static tfproto::BundleHeaderProto Header() {
    tfproto::BundleHeaderProto header;
    header.set_num_shards(1);
    header.mutable_version()->set_producer(1);
    return header;
  }

  // Writes <prefix_>.index with LevelDB (`header`, then `entries`) and the data file with
  // `data`.
  void Write(const std::vector<std::pair<std::string, std::string>>& entries,
             const std::string& data, const tfproto::BundleHeaderProto& header = Header()) {
    std::ofstream(prefix_ + ".data-00000-of-00001", std::ios::binary) << data;
    leveldb::WritableFile* raw = nullptr;
    ASSERT_TRUE(leveldb::Env::Default()->NewWritableFile(prefix_ + ".index", &raw).ok());
    std::unique_ptr<leveldb::WritableFile> file(raw);
    leveldb::TableBuilder builder(leveldb::Options(), file.get());
    builder.Add("", header.SerializeAsString());
    for (const auto& [key, value] : entries) builder.Add(key, value);
    ASSERT_TRUE(builder.Finish().ok());
    ASSERT_TRUE(file->Close().ok());
  }

  static std::string Entry(int dtype, std::vector<int64_t> dims, int64_t offset,
                           const std::string& bytes) {
    tfproto::BundleEntryProto e;
    e.set_dtype(static_cast<proto::DataType>(dtype));
    for (int64_t d : dims) e.mutable_shape()->add_dim()->set_size(d);
    e.set_offset(offset);
    e.set_size(static_cast<int64_t>(bytes.size()));
    e.set_crc32c(crc32c::Mask(crc32c::Value(bytes.data(), bytes.size())));
    return e.SerializeAsString();
  }

  std::string prefix_;
};

TEST_F(TfBundleTest, ReadsWhatLevelDbWrote) {
  // A float tensor long enough for Snappy to compress its entry's block.
  std::vector<float> values(1000, 0.5f);
  values[7] = 3.0f;
  const std::string floats(reinterpret_cast<const char*>(values.data()), values.size() * 4);
  const int64_t step = 42;
  const std::string step_bytes(reinterpret_cast<const char*>(&step), 8);
  Write({{"a/weights", Entry(1, {10, 100}, 0, floats)},
         {"global_step", Entry(9, {}, static_cast<int64_t>(floats.size()), step_bytes)}},
        floats + step_bytes);
  auto reader = CheckpointReader::Open(prefix_);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_THAT((*reader)->Names(), ::testing::ElementsAre("a/weights", "global_step"));
  auto rows = (*reader)->ReadRows("a/weights", 0, 2);  // the first two of ten rows
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->shape().dims(), (std::vector<int64_t>{2, 100}));
  EXPECT_EQ(rows->flat<float>()[7], 3.0f);
  EXPECT_EQ(rows->flat<float>()[150], 0.5f);
  auto got = (*reader)->ReadRows("global_step", 0, 1);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->flat<int64_t>()[0], 42);
}

TEST_F(TfBundleTest, ReadsSnappyCompressedBlocks) {
  // 300 alike entries: LevelDB's default options Snappy-compress such blocks (TensorFlow's
  // reader accepts them, though its writer does not compress), which the block check
  // before LevelDB reads the table must accept.
  std::vector<std::pair<std::string, std::string>> entries;
  size_t entry_bytes = 0;
  for (int i = 0; i < 300; ++i) {
    entries.emplace_back("tower_" + std::to_string(1000 + i) + "/dense/kernel/Adam_1",
                         Entry(1, {0}, 0, ""));
    entry_bytes += entries.back().first.size() + entries.back().second.size();
  }
  Write(entries, "");
  std::ifstream index(prefix_ + ".index", std::ios::binary | std::ios::ate);
  ASSERT_LT(static_cast<size_t>(index.tellg()), entry_bytes / 2) << "not compressed";
  auto reader = CheckpointReader::Open(prefix_);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ((*reader)->Names().size(), 300u);
}

TEST_F(TfBundleTest, AnEntryOutsideItsDataFileIsDataLoss) {
  const std::string four(4, '\0');
  Write({{"x", Entry(1, {2}, 0, std::string(8, '\0'))}}, four);  // the file is 4 bytes
  auto reader = CheckpointReader::Open(prefix_);
  ASSERT_FALSE(reader.ok());
  EXPECT_TRUE(IsDataLoss(reader.status())) << reader.status();
  EXPECT_THAT(std::string(reader.status().message()), ::testing::HasSubstr("\"x\""));
}

TEST_F(TfBundleTest, TooNewAFormatIsUnimplemented) {
  tfproto::BundleHeaderProto header = Header();
  header.mutable_version()->set_producer(5);
  header.mutable_version()->set_min_consumer(3);
  Write({}, "", header);
  auto reader = CheckpointReader::Open(prefix_);
  EXPECT_TRUE(IsUnimplemented(reader.status())) << reader.status();
}

}  // namespace
}  // namespace tw::checkpoint
