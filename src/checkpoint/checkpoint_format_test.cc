// The checkpoint files on their own: writer, merge, reader, the index's checks, the state
// file and the path checks.
#include "src/checkpoint/checkpoint_format.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/checkpoint/checkpoint_file.h"
#include "src/checkpoint/checkpoint_reader.h"
#include "src/checkpoint/checkpoint_state.h"
#include "src/checkpoint/checkpoint_writer.h"

namespace tw::checkpoint {
namespace {

using ::testing::HasSubstr;

std::string Message(const Status& s) { return std::string(s.message()); }

class CheckpointFormatTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = getenv("TMPDIR");
    std::string templ = std::string(tmp != nullptr ? tmp : "/tmp") + "/tw_ckpt_format_XXXXXX";
    ASSERT_NE(mkdtemp(templ.data()), nullptr);
    auto canonical = CanonicalDirectory(templ);
    ASSERT_TRUE(canonical.ok()) << canonical.status();
    dir_ = *canonical;
    prefix_ = dir_ + "/model.ckpt-1";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes `tensors` whole as a one-shard checkpoint at prefix_.
  void SaveWhole(const std::vector<std::pair<std::string, Tensor>>& tensors) {
    auto w = ShardWriter::Create(prefix_, 0, 1);
    ASSERT_TRUE(w.ok()) << w.status();
    for (const auto& [name, t] : tensors) {
      ASSERT_TRUE((*w)->Add(name, t.shape(), 0, t).ok()) << name;
    }
    ASSERT_TRUE((*w)->Finish().ok());
    ASSERT_TRUE(MergeShardIndexes(prefix_, 1).ok());
  }

  static std::string ReadFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  static void WriteFile(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  std::vector<std::string> Files() {
    std::vector<std::string> names = *ListDirectory(dir_);
    std::sort(names.begin(), names.end());
    return names;
  }

  std::string dir_, prefix_;
};

TEST_F(CheckpointFormatTest, RoundTripsEveryDtype) {
  const std::vector<std::pair<std::string, Tensor>> tensors = {
      {"f", Tensor::FromVector<float>({1.5f, -0.0f, 3e38f, -1e-30f}, TensorShape({2, 2}))},
      {"d", Tensor::FromVector<double>({3.141592653589793, -2.5e300})},
      {"i32", Tensor::FromVector<int32_t>({-2147483647 - 1, 0, 7})},
      {"u8", Tensor::FromVector<uint8_t>({0, 255, 128})},
      {"i64", Tensor::Scalar<int64_t>(int64_t{1} << 62)},
      {"b", Tensor::FromVector<bool>({true, false, true})},
      {"s", Tensor::FromVector<std::string>(
                {"", "hello", std::string(300, 'x'), std::string("a\0b", 3)})},
      {"empty", Tensor(DT_FLOAT, TensorShape({0, 3}))},
  };
  SaveWhole(tensors);
  EXPECT_THAT(Files(),
              ::testing::ElementsAre("model.ckpt-1.data-00000-of-00001", "model.ckpt-1.index"));
  auto reader = CheckpointReader::Open(prefix_);
  ASSERT_TRUE(reader.ok()) << reader.status();
  for (const auto& [name, t] : tensors) {
    auto info = (*reader)->Find(name);
    ASSERT_TRUE(info.ok()) << info.status();
    EXPECT_EQ(info->dtype, t.dtype());
    EXPECT_EQ(info->full_shape, t.shape());
    auto got = (*reader)->ReadRows(name, 0, NumRows(t.shape()));
    ASSERT_TRUE(got.ok()) << name << ": " << got.status();
    EXPECT_EQ(*got, t) << name;
  }
  auto missing = (*reader)->Find("nope");
  EXPECT_TRUE(IsNotFound(missing.status()));
  EXPECT_THAT(Message(missing.status()), HasSubstr("\"nope\""));
}

TEST_F(CheckpointFormatTest, SlicesFromTwoShardsAssembleAnyRowRange) {
  std::vector<int64_t> all(12);
  for (int i = 0; i < 12; ++i) all[i] = i * 10;
  const Tensor full = Tensor::FromVector<int64_t>(all, TensorShape({6, 2}));
  for (int shard = 0; shard < 2; ++shard) {
    auto w = ShardWriter::Create(prefix_, shard, 2);
    ASSERT_TRUE(w.ok());
    // Shard 0 holds rows [0, 2), shard 1 rows [2, 6), plus a string variable split 1 + 1.
    auto rows = full.Slice(shard == 0 ? 0 : 2, shard == 0 ? 2 : 6);
    ASSERT_TRUE((*w)->Add("p", full.shape(), shard == 0 ? 0 : 2, rows->Copy()).ok());
    ASSERT_TRUE((*w)->Add("s", TensorShape({2}), shard,
                          Tensor::FromVector<std::string>({shard == 0 ? "zero" : "one"}))
                    .ok());
    ASSERT_TRUE((*w)->Finish().ok());
  }
  ASSERT_TRUE(MergeShardIndexes(prefix_, 2).ok());
  // The shard indexes are gone once merged.
  EXPECT_THAT(Files(),
              ::testing::ElementsAre("model.ckpt-1.data-00000-of-00002",
                                     "model.ckpt-1.data-00001-of-00002", "model.ckpt-1.index"));
  auto reader = CheckpointReader::Open(prefix_);
  ASSERT_TRUE(reader.ok()) << reader.status();
  for (int64_t begin = 0; begin <= 6; ++begin) {
    for (int64_t end = begin; end <= 6; ++end) {
      auto got = (*reader)->ReadRows("p", begin, end - begin);
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_EQ(*got, full.Slice(begin, end)->Copy()) << begin << ".." << end;
    }
  }
  EXPECT_EQ(*(*reader)->ReadRows("s", 0, 2), Tensor::FromVector<std::string>({"zero", "one"}));
  EXPECT_TRUE(IsInvalidArgument((*reader)->ReadRows("p", 5, 2).status()));
}

TEST_F(CheckpointFormatTest, MergeRefusesSlicesThatLeaveAGap) {
  auto w = ShardWriter::Create(prefix_, 0, 1);
  ASSERT_TRUE((*w)->Add("p", TensorShape({4}), 1, Tensor::FromVector<float>({1, 2, 3})).ok());
  ASSERT_TRUE((*w)->Finish().ok());
  Status s = MergeShardIndexes(prefix_, 1);
  EXPECT_TRUE(IsInvalidArgument(s)) << s;
  EXPECT_THAT(Message(s), HasSubstr("\"p\" leave a gap at row 0"));
  EXPECT_FALSE(FileExists(IndexFileName(prefix_)));
}

TEST_F(CheckpointFormatTest, MergeNamesAMissingShard) {
  auto w = ShardWriter::Create(prefix_, 0, 2);
  ASSERT_TRUE((*w)->Add("v", TensorShape({}), 0, Tensor::Scalar(1.0f)).ok());
  ASSERT_TRUE((*w)->Finish().ok());
  Status s = MergeShardIndexes(prefix_, 2);
  EXPECT_TRUE(IsNotFound(s)) << s;
  EXPECT_THAT(Message(s), HasSubstr("model.ckpt-1.index-00001-of-00002"));
}

TEST_F(CheckpointFormatTest, WriterAddRejectsAValueThatIsNotASlice) {
  auto w = ShardWriter::Create(prefix_, 0, 1);
  Status s = (*w)->Add("p", TensorShape({4, 3}), 2, Tensor(DT_FLOAT, TensorShape({3, 3})));
  EXPECT_TRUE(IsInvalidArgument(s));
  EXPECT_THAT(Message(s), HasSubstr("\"p\""));
  EXPECT_TRUE(
      IsInvalidArgument((*w)->Add("r", TensorShape({}), 0, Tensor::Scalar(ResourceHandle{}))));
}

TEST_F(CheckpointFormatTest, UnfinishedWriterLeavesNoFiles) {
  {
    auto w = ShardWriter::Create(prefix_, 0, 1);
    ASSERT_TRUE((*w)->Add("v", TensorShape({}), 0, Tensor::Scalar(1.0f)).ok());
  }
  EXPECT_TRUE(Files().empty());
}

TEST_F(CheckpointFormatTest, FlippedDataByteIsDataLossNamingTensorAndFile) {
  SaveWhole(
      {{"a", Tensor::FromVector<float>({1, 2, 3})}, {"b", Tensor::FromVector<float>({4, 5, 6})}});
  const std::string data = DataFileName(prefix_, 0, 1);
  std::string bytes = ReadFile(data);
  bytes[13] ^= 0x01;  // inside "b" (bytes 12..23)
  WriteFile(data, bytes);
  auto reader = CheckpointReader::Open(prefix_);
  ASSERT_TRUE(reader.ok());
  EXPECT_TRUE((*reader)->ReadRows("a", 0, 3).ok());
  auto b = (*reader)->ReadRows("b", 0, 3);
  EXPECT_EQ(b.status().code(), absl::StatusCode::kDataLoss) << b.status();
  EXPECT_THAT(Message(b.status()), HasSubstr("tensor \"b\""));
  EXPECT_THAT(Message(b.status()), HasSubstr(data));
}

TEST_F(CheckpointFormatTest, TruncatedDataFileIsDataLoss) {
  SaveWhole({{"a", Tensor::FromVector<float>({1, 2, 3})}});
  const std::string data = DataFileName(prefix_, 0, 1);
  ASSERT_EQ(::truncate(data.c_str(), 8), 0);
  auto reader = CheckpointReader::Open(prefix_);
  ASSERT_TRUE(reader.ok());
  auto a = (*reader)->ReadRows("a", 0, 3);
  EXPECT_EQ(a.status().code(), absl::StatusCode::kDataLoss) << a.status();
  EXPECT_THAT(Message(a.status()), HasSubstr(data));
}

TEST_F(CheckpointFormatTest, MissingDataFileIsDataLoss) {
  SaveWhole({{"a", Tensor::FromVector<float>({1, 2, 3})}});
  ASSERT_TRUE(RemoveFileIfExists(DataFileName(prefix_, 0, 1)).ok());
  auto a = (*CheckpointReader::Open(prefix_))->ReadRows("a", 0, 3);
  EXPECT_EQ(a.status().code(), absl::StatusCode::kDataLoss) << a.status();
}

TEST_F(CheckpointFormatTest, EveryFlippedOrTruncatedIndexByteIsDataLoss) {
  SaveWhole({{"a", Tensor::FromVector<float>({1, 2, 3})},
             {"s", Tensor::FromVector<std::string>({"x", "yz"})}});
  const std::string index = IndexFileName(prefix_);
  const std::string good = ReadFile(index);
  ASSERT_TRUE(DecodeIndexFile(good, index).ok());
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] ^= 0x20;
    auto decoded = DecodeIndexFile(bad, index);
    EXPECT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss) << "byte " << i;
    EXPECT_THAT(Message(decoded.status()), HasSubstr(index));
    auto truncated = DecodeIndexFile(std::string_view(good).substr(0, i), index);
    EXPECT_EQ(truncated.status().code(), absl::StatusCode::kDataLoss) << "length " << i;
  }
  WriteFile(index, good.substr(0, good.size() - 1));
  auto reader = CheckpointReader::Open(prefix_);
  EXPECT_EQ(reader.status().code(), absl::StatusCode::kDataLoss);
}

TEST_F(CheckpointFormatTest, MissingIndexIsNotFound) {
  auto w = ShardWriter::Create(prefix_, 0, 1);
  ASSERT_TRUE((*w)->Add("v", TensorShape({}), 0, Tensor::Scalar(1.0f)).ok());
  ASSERT_TRUE((*w)->Finish().ok());  // data and shard index, but never merged
  auto reader = CheckpointReader::Open(prefix_);
  EXPECT_TRUE(IsNotFound(reader.status())) << reader.status();
  EXPECT_THAT(Message(reader.status()), HasSubstr("model.ckpt-1.index"));
  // A shard's own index is not a checkpoint either, even under the final name.
  ASSERT_EQ(::rename(ShardIndexFileName(prefix_, 0, 1).c_str(), IndexFileName(prefix_).c_str()), 0);
  EXPECT_EQ(CheckpointReader::Open(prefix_).status().code(), absl::StatusCode::kDataLoss);
}

// Indexes with a valid checksum but impossible contents (a bug or a forged file).
TEST_F(CheckpointFormatTest, ImpossibleIndexFieldsAreDataLoss) {
  proto::CheckpointIndex good;
  good.set_num_shards(1);
  good.set_shard(-1);
  good.add_shard_size(12);
  proto::CheckpointEntry* e = good.add_entry();
  e->set_name("v");
  e->set_dtype(proto::DT_FLOAT);
  e->add_full_shape(3);
  e->set_row_count(3);
  e->set_length(12);
  ASSERT_TRUE(DecodeIndexFile(EncodeIndexFile(good), "idx").ok());

  auto expect_loss = [&](const proto::CheckpointIndex& bad, const std::string& what) {
    auto decoded = DecodeIndexFile(EncodeIndexFile(bad), "idx");
    EXPECT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss) << what;
    EXPECT_THAT(Message(decoded.status()), HasSubstr("idx")) << what;
  };
  auto with = [&](auto change) {
    proto::CheckpointIndex bad = good;
    change(&bad, bad.mutable_entry(0));
    return bad;
  };
  using I = proto::CheckpointIndex;
  using E = proto::CheckpointEntry;
  expect_loss(with([](I*, E* x) { x->set_dtype(proto::DT_RESOURCE); }), "resource dtype");
  expect_loss(with([](I*, E* x) { x->set_dtype(static_cast<proto::DataType>(42)); }), "dtype 42");
  expect_loss(with([](I*, E* x) { x->set_full_shape(0, -3); }), "negative dim");
  expect_loss(with([](I*, E* x) {
                x->set_full_shape(0, int64_t{1} << 62);
                x->add_full_shape(int64_t{1} << 62);
              }),
              "overflowing shape");
  expect_loss(with([](I*, E* x) { x->set_length(13); }), "length not 3 floats");
  expect_loss(with([](I*, E* x) { x->set_offset(1); }), "past the file");
  expect_loss(with([](I*, E* x) { x->set_offset(~uint64_t{0}); }), "offset overflow");
  expect_loss(with([](I*, E* x) { x->set_shard(1); }), "bad shard");
  expect_loss(with([](I*, E* x) { x->set_row_count(4); }), "rows past shape");
  expect_loss(with([](I*, E* x) { x->set_row_offset(-1); }), "negative offset");
  expect_loss(with([](I*, E* x) { x->set_name(""); }), "no name");
  expect_loss(with([](I* i, E*) { i->set_num_shards(0); }), "no shards");
  expect_loss(with([](I* i, E*) { i->add_shard_size(1); }), "sizes");
  expect_loss(with([](I* i, E*) { *i->add_entry() = i->entry(0); }), "overlapping slices");
  expect_loss(with([](I*, E* x) {
                x->set_row_count(2);
                x->set_length(8);
              }),
              "rows not covered");
}

TEST_F(CheckpointFormatTest, DecodeTensorBytesChecksEveryByte) {
  EXPECT_EQ(
      DecodeTensorBytes(DT_BOOL, TensorShape({2}), std::string("\x01\x02", 2), "t").status().code(),
      absl::StatusCode::kDataLoss);
  EXPECT_EQ(DecodeTensorBytes(DT_FLOAT, TensorShape({2}), "1234567", "t").status().code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(DecodeTensorBytes(DT_STRING, TensorShape({1}),
                              "\x05"
                              "abc",
                              "t")
                .status()
                .code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(DecodeTensorBytes(DT_STRING, TensorShape({1}),
                              "\x01"
                              "ab",
                              "t")
                .status()
                .code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(DecodeTensorBytes(DT_STRING, TensorShape({1}),
                              "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", "t")
                .status()
                .code(),
            absl::StatusCode::kDataLoss);
  auto ok = DecodeTensorBytes(DT_STRING, TensorShape({2}),
                              std::string("\x01"
                                          "a\x00",
                                          3),
                              "t");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(*ok, Tensor::FromVector<std::string>({"a", ""}));
}

TEST_F(CheckpointFormatTest, PathsOutsideTheDirectoryAreRefused) {
  EXPECT_TRUE(CheckPathUnder(dir_, dir_ + "/model.ckpt-1").ok());
  EXPECT_TRUE(CheckPathUnder(dir_ + "/", dir_ + "/model.ckpt-1").ok());
  for (const std::string& bad :
       {dir_ + "/../model.ckpt-1", dir_ + "/./model.ckpt-1", dir_ + "//model.ckpt-1",
        std::string("/etc/passwd"), std::string("model.ckpt-1"), dir_ + "x/model.ckpt-1",
        dir_ + "/", dir_}) {
    Status s = CheckPathUnder(dir_, bad);
    EXPECT_TRUE(IsInvalidArgument(s)) << bad << ": " << s;
    EXPECT_THAT(Message(s), HasSubstr(bad)) << bad;
  }
  // A subdirectory that is a symbolic link to somewhere else.
  const std::string outside = dir_ + "_outside";
  ASSERT_TRUE(std::filesystem::create_directory(outside));
  std::filesystem::create_directory_symlink(outside, dir_ + "/link");
  Status s = CheckPathUnder(dir_, dir_ + "/link/model.ckpt-1");
  std::filesystem::remove_all(outside);
  EXPECT_TRUE(IsInvalidArgument(s)) << s;
  EXPECT_THAT(Message(s), HasSubstr("outside"));
}

TEST_F(CheckpointFormatTest, IndexThatIsASymbolicLinkIsRefused) {
  SaveWhole({{"a", Tensor::Scalar(1.0f)}});
  ASSERT_EQ(::rename(IndexFileName(prefix_).c_str(), (dir_ + "/real").c_str()), 0);
  std::filesystem::create_symlink(dir_ + "/real", IndexFileName(prefix_));
  EXPECT_TRUE(IsInvalidArgument(CheckpointReader::Open(prefix_).status()));
}

// A save killed midway leaves temporary files under names no reader opens; the next save
// (of any checkpoint) of the same shard, the next merge and the next state file write
// remove those another process left, and nothing else.
TEST_F(CheckpointFormatTest, TheNextSaveRemovesTemporaryFilesOfAKilledSave) {
  // What a process that died while saving model.ckpt-0 (shard 0 of 1) left behind.
  const std::string dead = std::string(kTempInfix) + "999999-12345-0";
  const std::vector<std::string> stale = {
      "model.ckpt-0.data-00000-of-00001" + dead, "model.ckpt-0.index-00000-of-00001" + dead,
      "model.ckpt-0.index" + dead, std::string(kStateFileName) + dead};
  // Not this shard's, not a checkpoint's, or not temporary: kept.
  const std::vector<std::string> kept = {"model.ckpt-0.data-00001-of-00002" + dead,
                                         "notes.txt" + dead, "model.ckpt-0.data-00000-of-00001"};
  for (const std::string& name : stale) WriteFile(dir_ + "/" + name, "partial");
  for (const std::string& name : kept) WriteFile(dir_ + "/" + name, "other");
  // A directory with a stale-looking name is never removed.
  std::filesystem::create_directory(dir_ + "/model.ckpt-0.index" + dead + "9");
  SaveWhole({{"a", Tensor::Scalar(1.0f)}});
  ASSERT_TRUE(WriteCheckpointState(dir_, {"model.ckpt-1", {"model.ckpt-1"}}).ok());
  std::vector<std::string> expected = kept;
  expected.push_back("model.ckpt-0.index" + dead + "9");
  expected.push_back(std::string(kStateFileName));
  expected.push_back("model.ckpt-1.data-00000-of-00001");
  expected.push_back("model.ckpt-1.index");
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(Files(), expected);
}

// A save in progress in this process keeps its temporary files.
TEST_F(CheckpointFormatTest, TemporaryFilesOfThisProcessAreKept) {
  auto first = ShardWriter::Create(prefix_, 0, 1);
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = ShardWriter::Create(dir_ + "/model.ckpt-2", 0, 1);
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_TRUE((*first)->Add("a", TensorShape({}), 0, Tensor::Scalar(1.0f)).ok());
  ASSERT_TRUE((*first)->Finish().ok());
  ASSERT_TRUE(MergeShardIndexes(prefix_, 1).ok());
  EXPECT_EQ(RemoveStaleTempFiles(dir_, [](std::string_view) { return true; }), 0);
  int temporary = 0;
  for (const std::string& name : Files()) temporary += name.find(kTempInfix) != std::string::npos;
  EXPECT_EQ(temporary, 1);  // model.ckpt-2's data file, still being written
}

TEST(CheckpointStateTest, FormatsAndParsesTensorFlowText) {
  CheckpointState state{"model.ckpt-3", {"model.ckpt-1", "we\"ird\\name", "model.ckpt-3"}};
  const std::string text = FormatCheckpointState(state);
  EXPECT_THAT(text, HasSubstr("model_checkpoint_path: \"model.ckpt-3\"\n"));
  auto parsed = ParseCheckpointState(text + "all_model_checkpoint_timestamps: 1.5\n", "f");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->model_checkpoint_path, "model.ckpt-3");
  EXPECT_EQ(parsed->all_model_checkpoint_paths, state.all_model_checkpoint_paths);
  for (const char* bad :
       {"model_checkpoint_path: model.ckpt-3", "model_checkpoint_path: \"x",
        "model_checkpoint_path: \"\"", "garbage line", "model_checkpoint_path: \"a\\q\""}) {
    auto s = ParseCheckpointState(std::string("\n") + bad + "\n", "the_state");
    EXPECT_EQ(s.status().code(), absl::StatusCode::kDataLoss) << bad;
    EXPECT_THAT(Message(s.status()), HasSubstr("the_state line 2")) << bad;
  }
}

}  // namespace
}  // namespace tw::checkpoint
