#include "src/core/tensor_coding.h"

#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <utility>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tw {
namespace {

using ::testing::HasSubstr;

Tensor RoundTrip(const Tensor& t) {
  proto::TensorProto p;
  TensorToProto(t, &p);
  auto back = TensorFromProto(p);
  EXPECT_TRUE(back.ok()) << back.status();
  return back.ok() ? *back : Tensor();
}

TEST(TensorCodingTest, RoundTripsEveryType) {
  const std::vector<Tensor> tensors = {
      Tensor::FromVector<float>({1.5f, -2, std::numeric_limits<float>::quiet_NaN()}),
      Tensor::FromVector<double>({1e300, -0.0}, TensorShape({2, 1})),
      Tensor::FromVector<int32_t>({std::numeric_limits<int32_t>::min(), 7}),
      Tensor::FromVector<int64_t>({std::numeric_limits<int64_t>::max()}),
      Tensor::FromVector<uint8_t>({0, 255}),
      Tensor::FromVector<bool>({true, false, true}),
      Tensor::FromVector<std::string>({"", std::string("with\0nul", 8), "ünïcode"}),
      Tensor::Scalar<float>(3),
      Tensor(DT_FLOAT, TensorShape({0, 4})),
      Tensor::FromVector<ResourceHandle>(
          {{"/job:ps/replica:0/task:0/device:CPU:0", "ps", "v0", "Variable"}}),
      Tensor::FromVector<int8_t>({-128, 0, 127}),
      Tensor::FromVector<int16_t>({-32768, 1, 32767}, TensorShape({3, 1})),
      Tensor::FromVector<uint16_t>({0, 65535}),
      Tensor::FromVector<std::complex<float>>(
          {{1.5f, -2}, {std::numeric_limits<float>::infinity(), -0.0f}}),
      Tensor::FromVector<std::complex<double>>({{1e300, -1e-300}}, TensorShape({1, 1})),
      Tensor(DT_COMPLEX128, TensorShape({0})),
      Tensor(DT_INT8, TensorShape({2, 0})),
  };
  for (const Tensor& t : tensors) EXPECT_EQ(RoundTrip(t), t) << t.DebugString();
}

// TensorFlow's layout: little-endian elements, a complex one its real part then its
// imaginary part; the proto's dtype carries TensorFlow's number.
TEST(TensorCodingTest, SmallIntegerAndComplexContentIsTensorFlowsLayout) {
  proto::TensorProto p;
  TensorToProto(Tensor::FromVector<std::complex<float>>({{1, -2}}), &p);
  EXPECT_EQ(static_cast<int>(p.dtype()), 8);
  ASSERT_EQ(p.tensor_content().size(), 8u);
  float parts[2];
  std::memcpy(parts, p.tensor_content().data(), sizeof(parts));
  EXPECT_EQ(parts[0], 1.0f);
  EXPECT_EQ(parts[1], -2.0f);

  TensorToProto(Tensor::FromVector<int16_t>({0x0102}), &p);
  EXPECT_EQ(static_cast<int>(p.dtype()), 5);
  EXPECT_EQ(p.tensor_content(), std::string("\x02\x01", 2));
  for (auto [number, bytes] : {std::pair{6, 1}, std::pair{17, 2}, std::pair{18, 16}}) {
    p.set_dtype(static_cast<proto::DataType>(number));
    p.set_tensor_content(std::string(2 * bytes, '\x7f'));
    p.mutable_shape()->clear_dim();
    p.mutable_shape()->add_dim(2);
    auto t = TensorFromProto(p);
    ASSERT_TRUE(t.ok()) << number << ": " << t.status();
    EXPECT_EQ(static_cast<int>(t->dtype()), number);
    EXPECT_EQ(t->TotalBytes(), static_cast<size_t>(2 * bytes));
    // A wrong byte count names the type.
    p.set_tensor_content(std::string(2 * bytes + 1, '\0'));
    EXPECT_THAT(TensorFromProto(p).status().message(),
                HasSubstr(std::string("TensorProto of dtype ") +
                          std::string(DataTypeName(static_cast<DataType>(number)))));
  }
}

TEST(TensorCodingTest, NumericContentIsOneContiguousByteString) {
  Tensor t = Tensor::FromVector<int32_t>({1, 2, 3, 4}, TensorShape({2, 2}));
  proto::TensorProto p;
  TensorToProto(t, &p);
  EXPECT_EQ(p.dtype(), proto::DT_INT32);
  EXPECT_THAT(p.shape().dim(), ::testing::ElementsAre(2, 2));
  ASSERT_EQ(p.tensor_content().size(), 16u);
  EXPECT_EQ(std::memcmp(p.tensor_content().data(), t.raw_data(), 16), 0);
  EXPECT_EQ(p.string_val_size(), 0);
}

TEST(TensorCodingTest, EncodesASliceOnlyItsRows) {
  Tensor m = Tensor::FromVector<int64_t>({1, 2, 3, 4, 5, 6}, TensorShape({3, 2}));
  EXPECT_EQ(RoundTrip(*m.Slice(1, 2)), Tensor::FromVector<int64_t>({3, 4}, TensorShape({1, 2})));
}

proto::TensorProto FloatProto(std::vector<int64_t> dims, size_t bytes) {
  proto::TensorProto p;
  p.set_dtype(proto::DT_FLOAT);
  for (int64_t d : dims) p.mutable_shape()->add_dim(d);
  p.set_tensor_content(std::string(bytes, '\0'));
  return p;
}

TEST(TensorCodingTest, RejectsWrongByteCount) {
  auto t = TensorFromProto(FloatProto({2, 3}, 20));
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(IsInvalidArgument(t.status()));
  EXPECT_THAT(t.status().message(), HasSubstr("has 20 bytes of content, expected 6 x 4"));
}

TEST(TensorCodingTest, RejectsUnknownDtype) {
  proto::TensorProto p = FloatProto({1}, 4);
  p.set_dtype(static_cast<proto::DataType>(42));
  EXPECT_THAT(TensorFromProto(p).status().message(), HasSubstr("unknown dtype 42"));
  p.set_dtype(proto::DT_INVALID);
  EXPECT_THAT(TensorFromProto(p).status().message(), HasSubstr("unknown dtype 0"));
}

TEST(TensorCodingTest, RejectsNegativeAndOverflowingDims) {
  EXPECT_THAT(TensorFromProto(FloatProto({2, -1}, 0)).status().message(),
              HasSubstr("dimension 1 is -1"));
  const int64_t big = int64_t{1} << 40;
  EXPECT_THAT(TensorFromProto(FloatProto({big, big}, 0)).status().message(),
              HasSubstr("more elements than fit in int64"));
  // Fits in int64 elements, overflows in bytes: must not allocate, must not crash.
  EXPECT_TRUE(IsInvalidArgument(
      TensorFromProto(FloatProto({std::numeric_limits<int64_t>::max() / 2}, 8)).status()));
}

TEST(TensorCodingTest, RejectsStringCountMismatchAndMixedFields) {
  proto::TensorProto p;
  p.set_dtype(proto::DT_STRING);
  p.mutable_shape()->add_dim(2);
  p.add_string_val("only one");
  EXPECT_THAT(TensorFromProto(p).status().message(), HasSubstr("holds 1 strings, expected 2"));
  proto::TensorProto q = FloatProto({1}, 4);
  q.add_string_val("x");
  EXPECT_THAT(TensorFromProto(q).status().message(),
              HasSubstr("has string_val or resource_val entries"));
}

TEST(TensorCodingTest, RejectsBoolBytesOtherThanZeroAndOne) {
  proto::TensorProto p;
  p.set_dtype(proto::DT_BOOL);
  p.mutable_shape()->add_dim(3);
  p.set_tensor_content(std::string("\x01\x00\x07", 3));
  EXPECT_THAT(TensorFromProto(p).status().message(), HasSubstr("byte 2 = 7"));
}

}  // namespace
}  // namespace tw

namespace tw {
namespace {

TEST(TensorCodingTest, AllocateFromMetaProtoTakesNumericHeadersOnly) {
  proto::TensorProto meta;
  TensorMetaToProto(Tensor(DT_FLOAT, TensorShape({3, 5})), &meta);
  auto tensor = AllocateFromMetaProto(meta);
  ASSERT_TRUE(tensor.ok()) << tensor.status();
  EXPECT_EQ(tensor->dtype(), DT_FLOAT);
  EXPECT_EQ(tensor->shape(), TensorShape({3, 5}));
  for (DataType dtype : {DT_STRING, DT_BOOL, DT_RESOURCE}) {
    meta.set_dtype(static_cast<proto::DataType>(dtype));
    EXPECT_TRUE(IsInvalidArgument(AllocateFromMetaProto(meta).status())) << dtype;
  }
  // Tensors that arrive in pieces (chunked transfer) may be of any plain numeric type.
  for (DataType dtype : {DT_INT8, DT_INT16, DT_UINT16, DT_COMPLEX64, DT_COMPLEX128}) {
    meta.set_dtype(static_cast<proto::DataType>(dtype));
    auto pieces = AllocateFromMetaProto(meta);
    ASSERT_TRUE(pieces.ok()) << DataTypeName(dtype) << ": " << pieces.status();
    EXPECT_EQ(pieces->dtype(), dtype);
    EXPECT_EQ(pieces->TotalBytes(), 15 * DataTypeSize(dtype));
  }
  meta.set_dtype(proto::DT_FLOAT);
  meta.mutable_shape()->set_dim(0, -1);
  EXPECT_TRUE(IsInvalidArgument(AllocateFromMetaProto(meta).status()));
}

}  // namespace
}  // namespace tw
