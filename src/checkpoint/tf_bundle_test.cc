// TensorFlow checkpoints whose index LevelDB's own TableBuilder writes with its default
// options (Snappy-compressed blocks, as TensorFlow's table options default to), read by
// CheckpointReader; and TensorFlow's index written from shards in its format, read back
// with LevelDB. python/tests/test_tf_checkpoint.py writes them byte by byte from the
// published formats instead.
#include "src/checkpoint/tf_bundle.h"

#include <unistd.h>

#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "leveldb/env.h"
#include "leveldb/iterator.h"
#include "leveldb/options.h"
#include "leveldb/table.h"
#include "leveldb/table_builder.h"
#include "src/base/crc32c.h"
#include "src/checkpoint/checkpoint_reader.h"
#include "src/checkpoint/checkpoint_writer.h"
#include "src/checkpoint/ordered_code.h"
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

TEST_F(TfBundleTest, WritesTensorFlowsIndexForShardsInItsFormat) {
  // Two shards, as two ps tasks save: "w" whole on shard 0, "emb" in row slices on both.
  auto rows = [](int64_t n, float v) {
    return Tensor::FromVector<float>(std::vector<float>(n * 2, v), {n, 2});
  };
  const TensorShape emb_shape = *TensorShape::Create({5, 2});
  for (int shard = 0; shard < 2; ++shard) {
    auto writer = ShardWriter::Create(prefix_, shard, 2, /*tensorflow_format=*/true);
    ASSERT_TRUE(writer.ok()) << writer.status();
    if (shard == 0) {
      ASSERT_TRUE((*writer)
                      ->Add("w", *TensorShape::Create({3}), 0,
                            Tensor::FromVector<std::string>({"a", "", "bc"}, {3}))
                      .ok());
      ASSERT_TRUE((*writer)->Add("emb", emb_shape, 0, rows(3, 1.0f)).ok());
    } else {
      ASSERT_TRUE((*writer)->Add("emb", emb_shape, 3, rows(2, 2.0f)).ok());
    }
    ASSERT_TRUE((*writer)->Finish().ok());
  }
  ASSERT_TRUE(MergeShardIndexes(prefix_, 2).ok());

  // The index, read with LevelDB: the header, the slice keys (first: they begin with a zero
  // byte), then the names.
  leveldb::RandomAccessFile* raw = nullptr;
  uint64_t size = 0;
  ASSERT_TRUE(leveldb::Env::Default()->GetFileSize(prefix_ + ".index", &size).ok());
  ASSERT_TRUE(leveldb::Env::Default()->NewRandomAccessFile(prefix_ + ".index", &raw).ok());
  std::unique_ptr<leveldb::RandomAccessFile> file(raw);
  leveldb::Table* raw_table = nullptr;
  ASSERT_TRUE(leveldb::Table::Open(leveldb::Options(), file.get(), size, &raw_table).ok());
  std::unique_ptr<leveldb::Table> table(raw_table);
  std::unique_ptr<leveldb::Iterator> it(table->NewIterator(leveldb::ReadOptions()));
  std::vector<std::string> keys;
  std::map<std::string, tfproto::BundleEntryProto> entries;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    keys.push_back(it->key().ToString());
    if (!keys.back().empty()) entries[keys.back()].ParseFromString(it->value().ToString());
  }
  const std::string first_rows = EncodeSliceKey("emb", {{0, 3}, {0, -1}});
  const std::string last_rows = EncodeSliceKey("emb", {{3, 2}, {0, -1}});
  EXPECT_THAT(keys, ::testing::ElementsAre("", first_rows, last_rows, "emb", "w"));
  EXPECT_EQ(entries["emb"].slices_size(), 2);
  EXPECT_EQ(entries["emb"].slices(1).extent(0).start(), 3);
  EXPECT_EQ(entries["emb"].slices(1).extent(0).length(), 2);
  EXPECT_EQ(entries[last_rows].shard_id(), 1);
  EXPECT_EQ(entries[last_rows].size(), 2 * 2 * 4);
  EXPECT_EQ(entries["w"].dtype(), DT_STRING);

  auto reader = CheckpointReader::Open(prefix_);
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto emb = (*reader)->ReadRows("emb", 2, 2);  // one row of each slice
  ASSERT_TRUE(emb.ok()) << emb.status();
  EXPECT_THAT(std::vector<float>(emb->flat<float>().data(), emb->flat<float>().data() + 4),
              ::testing::ElementsAre(1.0f, 1.0f, 2.0f, 2.0f));
  auto w = (*reader)->ReadRows("w", 0, 3);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->flat<std::string>()[2], "bc");
}

TEST_F(TfBundleTest, ShardsInDifferentFormatsDoNotMerge) {
  for (int shard = 0; shard < 2; ++shard) {
    auto writer = ShardWriter::Create(prefix_, shard, 2, /*tensorflow_format=*/shard == 0);
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE((*writer)->Finish().ok());
  }
  const Status merged = MergeShardIndexes(prefix_, 2);
  EXPECT_TRUE(IsInvalidArgument(merged)) << merged;
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
