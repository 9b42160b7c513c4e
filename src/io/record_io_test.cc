// RecordWriter and RecordReader: the TFRecord framing byte for byte, and the errors for
// torn and changed records.
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/base/crc32c.h"
#include "src/io/record_reader.h"
#include "src/io/record_writer.h"
#include "zlib.h"

namespace tw::io {
namespace {

using ::testing::HasSubstr;

std::string Message(const Status& s) { return std::string(s.message()); }

class RecordIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = std::filesystem::temp_directory_path().string() + "/tw_record_XXXXXX";
    ASSERT_NE(mkdtemp(templ.data()), nullptr);
    dir_ = templ;
    path_ = dir_ + "/records";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string ReadFile() {
    std::ifstream in(path_, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  void WriteFile(const std::string& bytes) {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  void WriteRecords(const std::vector<std::string>& records, RecordWriterOptions options = {}) {
    auto writer = RecordWriter::Create(path_, options);
    ASSERT_TRUE(writer.ok()) << writer.status();
    for (const auto& r : records) ASSERT_TRUE((*writer)->Write(r).ok());
    ASSERT_TRUE((*writer)->Close().ok());
  }

  std::string dir_, path_;
};

TEST_F(RecordIoTest, FramesLengthAndDataWithMaskedCrcs) {
  const std::string frame = FrameRecord("abc");
  ASSERT_EQ(frame.size(), 8u + 4u + 3u + 4u);
  EXPECT_EQ(frame.substr(0, 8), std::string("\x03\0\0\0\0\0\0\0", 8));
  auto u32 = [&](size_t at) {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i)
      v |= static_cast<uint32_t>(static_cast<uint8_t>(frame[at + i])) << (8 * i);
    return v;
  };
  EXPECT_EQ(u32(8), crc32c::Mask(crc32c::Value(frame.data(), 8)));
  EXPECT_EQ(frame.substr(12, 3), "abc");
  EXPECT_EQ(u32(15), crc32c::Mask(crc32c::Value("abc", 3)));
  // The mask TensorFlow documents, spelled out: rotate right by 15, add 0xa282ead8.
  const uint32_t crc = crc32c::Value("abc", 3);
  EXPECT_EQ(u32(15), ((crc >> 15) | (crc << 17)) + 0xa282ead8u);
}

TEST_F(RecordIoTest, ReadsBackWhatWasWritten) {
  WriteRecords({"first", "", std::string(100000, 'x')});
  EXPECT_EQ(ReadFile().size(), 3 * 16u + 5 + 0 + 100000);
  auto reader = RecordReader::Open(path_);
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ(*(*reader)->Next(), "first");
  EXPECT_EQ(*(*reader)->Next(), "");
  EXPECT_EQ((*reader)->Next()->size(), 100000u);
  auto end = (*reader)->Next();
  EXPECT_TRUE(IsOutOfRange(end.status())) << end.status();
}

TEST_F(RecordIoTest, NeverTruncatesAnExistingFile) {
  WriteFile("keep");
  auto writer = RecordWriter::Create(path_);
  EXPECT_TRUE(absl::IsAlreadyExists(writer.status())) << writer.status();
  EXPECT_THAT(Message(writer.status()), HasSubstr(path_));
  EXPECT_EQ(ReadFile(), "keep");
}

TEST_F(RecordIoTest, MissingDirectoryIsNotFoundNamingThePath) {
  auto writer = RecordWriter::Create(dir_ + "/no/such/file");
  EXPECT_TRUE(IsNotFound(writer.status())) << writer.status();
  EXPECT_THAT(Message(writer.status()), HasSubstr(dir_ + "/no/such/file"));
}

TEST_F(RecordIoTest, ChangedDataByteIsDataLossNamingFileAndOffset) {
  WriteRecords({"one", "two"});
  std::string bytes = ReadFile();
  const size_t second = FrameRecord("one").size();
  bytes[second + 12 + 1] ^= 0x01;  // inside "two"
  WriteFile(bytes);
  auto reader = RecordReader::Open(path_);
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ(*(*reader)->Next(), "one");
  auto bad = (*reader)->Next();
  EXPECT_TRUE(IsDataLoss(bad.status())) << bad.status();
  EXPECT_THAT(Message(bad.status()), HasSubstr(path_));
  EXPECT_THAT(Message(bad.status()), HasSubstr("data CRC mismatch"));
  EXPECT_THAT(Message(bad.status()), HasSubstr("byte offset " + std::to_string(second)));
  // Nothing after a bad record is trusted.
  EXPECT_TRUE(IsDataLoss((*reader)->Next().status()));
}

TEST_F(RecordIoTest, ChangedLengthIsDataLoss) {
  WriteRecords({"one"});
  std::string bytes = ReadFile();
  bytes[0] = 'x';
  WriteFile(bytes);
  auto bad = (*RecordReader::Open(path_))->Next();
  EXPECT_TRUE(IsDataLoss(bad.status())) << bad.status();
  EXPECT_THAT(Message(bad.status()), HasSubstr("length CRC mismatch"));
  EXPECT_THAT(Message(bad.status()), HasSubstr("byte offset 0"));
}

TEST_F(RecordIoTest, TornLastRecordIsDataLoss) {
  WriteRecords({"one", "two"});
  std::string bytes = ReadFile();
  WriteFile(bytes.substr(0, bytes.size() - 2));
  auto reader = RecordReader::Open(path_);
  EXPECT_EQ(*(*reader)->Next(), "one");
  auto bad = (*reader)->Next();
  EXPECT_TRUE(IsDataLoss(bad.status())) << bad.status();
  EXPECT_THAT(Message(bad.status()), HasSubstr("the file ends inside the data"));

  WriteFile(bytes.substr(0, 5));
  bad = (*RecordReader::Open(path_))->Next();
  EXPECT_THAT(Message(bad.status()), HasSubstr("the file ends inside the length header"));
}

TEST_F(RecordIoTest, WriteAfterCloseFails) {
  auto writer = RecordWriter::Create(path_);
  ASSERT_TRUE((*writer)->Close().ok());
  EXPECT_TRUE(IsFailedPrecondition((*writer)->Write("x")));
  EXPECT_TRUE((*writer)->Close().ok());
}

TEST_F(RecordIoTest, TruncatesWhenAsked) {
  WriteFile("an older, longer file");
  WriteRecords({"x"}, {.truncate = true});
  EXPECT_EQ(ReadFile(), FrameRecord("x"));
}

// zlib's one-shot inflate of a whole file, apart from the streaming reader.
std::string InflateAll(const std::string& bytes, int window_bits) {
  z_stream z{};
  EXPECT_EQ(inflateInit2(&z, window_bits), Z_OK);
  std::string out(1 << 22, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(inflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(out.size() - z.avail_out);
  inflateEnd(&z);
  return out;
}

std::string DeflateAll(const std::string& bytes, int window_bits) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 9, Z_DEFLATED, window_bits, 9, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, bytes.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(out.size() - z.avail_out);
  deflateEnd(&z);
  return out;
}

class CompressedRecordsTest : public RecordIoTest,
                              public ::testing::WithParamInterface<Compression> {
 protected:
  int WindowBits() const { return GetParam() == Compression::kGzip ? 31 : 15; }
  std::vector<std::string> Records() const {
    std::vector<std::string> records = {"first", "", std::string(300000, 'y')};
    for (int i = 0; i < 2000; ++i) records.push_back("record " + std::to_string(i));
    return records;
  }
};

TEST_P(CompressedRecordsTest, WriterOutputIsOneStreamOfTheFramedRecords) {
  const auto records = Records();
  WriteRecords(records, {.compression = GetParam()});
  std::string framed;
  for (const auto& r : records) framed += FrameRecord(r);
  const std::string file = ReadFile();
  EXPECT_LT(file.size(), framed.size() / 10);
  EXPECT_EQ(InflateAll(file, WindowBits()), framed);
  if (GetParam() == Compression::kGzip) {
    EXPECT_EQ(file.substr(0, 2), "\x1f\x8b");
  }
}

TEST_P(CompressedRecordsTest, ReaderReadsAStreamCompressedElsewhere) {
  const auto records = Records();
  std::string framed;
  for (const auto& r : records) framed += FrameRecord(r);
  WriteFile(DeflateAll(framed, WindowBits()));
  // A small buffer makes records cross many reads.
  auto reader = RecordReader::Open(path_, {.compression = GetParam(), .buffer_bytes = 64});
  ASSERT_TRUE(reader.ok()) << reader.status();
  std::string record;
  for (const auto& want : records) {
    ASSERT_TRUE((*reader)->Next(&record).ok());
    ASSERT_EQ(record, want);
  }
  EXPECT_TRUE(IsOutOfRange((*reader)->Next(&record)));
  EXPECT_EQ((*reader)->offset(), framed.size());
}

TEST_P(CompressedRecordsTest, FlushMakesRecordsReadableBeforeClose) {
  auto writer = RecordWriter::Create(path_, {.compression = GetParam()});
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Write("early").ok());
  ASSERT_TRUE((*writer)->Flush().ok());
  auto reader = RecordReader::Open(path_, {.compression = GetParam()});
  EXPECT_EQ(*(*reader)->Next(), "early");
  ASSERT_TRUE((*writer)->Close().ok());
}

TEST_P(CompressedRecordsTest, CutOrChangedStreamIsDataLoss) {
  WriteRecords(Records(), {.compression = GetParam()});
  const std::string file = ReadFile();
  WriteFile(file.substr(0, file.size() / 2));
  auto reader = RecordReader::Open(path_, {.compression = GetParam()});
  Status status;
  std::string record;
  for (int i = 0; i < 3000 && status.ok(); ++i) status = (*reader)->Next(&record);
  EXPECT_TRUE(IsDataLoss(status)) << status;
  EXPECT_THAT(Message(status), HasSubstr(path_));

  std::string changed = file;
  changed[changed.size() / 2] ^= 0x55;
  WriteFile(changed);
  reader = RecordReader::Open(path_, {.compression = GetParam()});
  status = OkStatus();
  for (int i = 0; i < 3000 && status.ok(); ++i) status = (*reader)->Next(&record);
  EXPECT_TRUE(IsDataLoss(status)) << status;
}

TEST_F(RecordIoTest, WrongCompressionIsDataLossNotACrash) {
  WriteRecords({"plain"});
  auto reader = RecordReader::Open(path_, {.compression = Compression::kGzip});
  auto r = (*reader)->Next();
  EXPECT_TRUE(IsDataLoss(r.status())) << r.status();
  EXPECT_THAT(Message(r.status()), HasSubstr("GZIP"));
}

TEST(CompressionNames, AreTensorFlowsStrings) {
  EXPECT_EQ(*ParseCompression(""), Compression::kNone);
  EXPECT_EQ(*ParseCompression("ZLIB"), Compression::kZlib);
  EXPECT_EQ(*ParseCompression("GZIP"), Compression::kGzip);
  auto bad = ParseCompression("gzip2");
  EXPECT_TRUE(IsInvalidArgument(bad.status()));
  EXPECT_THAT(Message(bad.status()), HasSubstr("gzip2"));
}

INSTANTIATE_TEST_SUITE_P(ZlibAndGzip, CompressedRecordsTest,
                         ::testing::Values(Compression::kZlib, Compression::kGzip));

}  // namespace
}  // namespace tw::io
