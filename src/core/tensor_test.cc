#include "tensorweave/tensor.h"

#include <complex>
#include <cstdint>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tw {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(TensorTest, AllocatesTypedAlignedStorage) {
  for (DataType dt : {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64, DT_UINT8, DT_BOOL, DT_STRING}) {
    auto t = Tensor::Allocate(dt, TensorShape({3, 5}));
    ASSERT_TRUE(t.ok()) << DataTypeName(dt);
    EXPECT_EQ(t->dtype(), dt);
    EXPECT_EQ(t->num_elements(), 15);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t->raw_data()) % 64, 0u) << DataTypeName(dt);
    EXPECT_EQ(t->TotalBytes(), 15 * DataTypeSize(dt));
  }
}

TEST(TensorTest, StringElementsStartEmpty) {
  Tensor t(DT_STRING, TensorShape({2}));
  EXPECT_THAT(t.flat<std::string>(), ElementsAre("", ""));
  t.flat<std::string>()[1] = "hello";
  EXPECT_EQ(t.flat<std::string>()[1], "hello");
}

TEST(TensorTest, AllocateRejectsBadArguments) {
  auto partial = Tensor::Allocate(DT_FLOAT, *TensorShape::Create({-1, 2}));
  EXPECT_THAT(partial.status().message(), HasSubstr("partial shape [?,2]"));
  auto invalid = Tensor::Allocate(DT_INVALID, TensorShape({1}));
  EXPECT_TRUE(IsInvalidArgument(invalid.status()));
  // Element count fits in int64 but the byte size does not fit in size_t.
  auto huge = Tensor::Allocate(DT_DOUBLE, TensorShape({std::numeric_limits<int64_t>::max() / 2}));
  EXPECT_THAT(huge.status().message(), HasSubstr("too large"));
  // The byte size fits but no machine has that memory: an error, not an exception.
  auto exabyte = Tensor::Allocate(DT_UINT8, TensorShape({int64_t{1} << 60}));
  EXPECT_TRUE(absl::IsResourceExhausted(exabyte.status())) << exabyte.status();
  EXPECT_THAT(exabyte.status().message(), HasSubstr("cannot allocate 1152921504606846976 bytes"));
}

TEST(TensorTest, CopiesShareTheBuffer) {
  Tensor a = Tensor::FromVector<int32_t>({1, 2, 3});
  Tensor b = a;
  b.flat<int32_t>()[0] = 42;
  EXPECT_EQ(a.flat<int32_t>()[0], 42);
  EXPECT_TRUE(a.SharesBufferWith(b));
  EXPECT_FALSE(a.SharesBufferWith(Tensor::FromVector<int32_t>({1, 2, 3})));
}

TEST(TensorTest, ScalarAndFromVectorWithShape) {
  EXPECT_EQ(Tensor::Scalar<int64_t>(7).scalar<int64_t>(), 7);
  EXPECT_EQ(Tensor::Scalar<std::string>("hi").scalar<std::string>(), "hi");
  Tensor m = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3}));
  EXPECT_EQ(m.shape(), TensorShape({2, 3}));
  EXPECT_THAT(m.flat<float>(), ElementsAre(1, 2, 3, 4, 5, 6));
}

TEST(TensorTest, SliceIsAViewOfRowsWithoutCopying) {
  Tensor m = Tensor::FromVector<float>({0, 1, 2, 3, 4, 5, 6, 7}, TensorShape({4, 2}));
  auto rows = m.Slice(1, 3);
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->shape(), TensorShape({2, 2}));
  EXPECT_THAT(rows->flat<float>(), ElementsAre(2, 3, 4, 5));
  EXPECT_TRUE(rows->SharesBufferWith(m));
  rows->flat<float>()[0] = 20;  // writes through to the parent
  EXPECT_EQ(m.flat<float>()[2], 20);
  // Empty and full slices.
  EXPECT_EQ(m.Slice(2, 2)->num_elements(), 0);
  EXPECT_EQ(*m.Slice(0, 4), m);
}

TEST(TensorTest, ReshapedSharesTheBufferAndCopyDoesNot) {
  Tensor m = Tensor::FromVector<int32_t>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3}));
  auto flat = m.Reshaped(TensorShape({6}));
  ASSERT_TRUE(flat.ok());
  EXPECT_TRUE(flat->SharesBufferWith(m));
  EXPECT_EQ(*flat, Tensor::FromVector<int32_t>({1, 2, 3, 4, 5, 6}));
  EXPECT_THAT(m.Reshaped(TensorShape({4})).status().message(),
              HasSubstr("cannot view a tensor of shape [2,3] as shape [4]"));
  Tensor copy = m.Copy();
  EXPECT_EQ(copy, m);
  EXPECT_FALSE(copy.SharesBufferWith(m));
  copy.flat<int32_t>()[0] = 9;
  EXPECT_EQ(m.flat<int32_t>()[0], 1);
  Tensor strings = Tensor::FromVector<std::string>({"a", "b"});
  EXPECT_EQ(strings.Copy(), strings);
}

TEST(TensorTest, SliceOfStringsAndErrors) {
  Tensor s = Tensor::FromVector<std::string>({"a", "b", "c"});
  EXPECT_THAT(s.Slice(1, 3)->flat<std::string>(), ElementsAre("b", "c"));
  EXPECT_THAT(s.Slice(2, 4).status().message(), HasSubstr("outside dimension 0"));
  EXPECT_THAT(s.Slice(2, 1).status().message(), HasSubstr("outside dimension 0"));
  EXPECT_THAT(Tensor::Scalar<float>(1).Slice(0, 1).status().message(), HasSubstr("rank >= 1"));
}

TEST(TensorTest, EqualityComparesTypeShapeAndValues) {
  EXPECT_EQ(Tensor::FromVector<float>({1, 2}), Tensor::FromVector<float>({1, 2}));
  EXPECT_NE(Tensor::FromVector<float>({1, 2}), Tensor::FromVector<float>({1, 3}));
  EXPECT_NE(Tensor::FromVector<float>({1, 2}), Tensor::FromVector<double>({1, 2}));
  EXPECT_NE(Tensor::FromVector<float>({1, 2}),
            Tensor::FromVector<float>({1, 2}, TensorShape({1, 2})));
  EXPECT_EQ(Tensor::FromVector<std::string>({"x"}), Tensor::FromVector<std::string>({"x"}));
  EXPECT_NE(Tensor::FromVector<std::string>({"x"}), Tensor::FromVector<std::string>({"y"}));
  EXPECT_EQ(Tensor(), Tensor());
}

TEST(TensorTest, DebugStringShowsTypeShapeAndFirstValues) {
  EXPECT_EQ(Tensor::FromVector<int32_t>({1, 2, 3}).DebugString(2), "Tensor<int32, [3]>: 1 2 ...");
  EXPECT_EQ(Tensor::Scalar<bool>(true).DebugString(), "Tensor<bool, []>: 1");
  EXPECT_EQ(Tensor().DebugString(), "Tensor<uninitialized>");
}

// The types beyond the first eight carry TensorFlow's numbers and names, so graphs and
// tensors of TF's read unchanged.
TEST(DataTypeTest, SmallIntegerAndComplexTypesHaveTensorFlowsNumbersNamesAndSizes) {
  struct Expected {
    DataType dtype;
    int number;
    std::string_view name;
    size_t size;
  };
  for (const Expected& e :
       {Expected{DT_INT16, 5, "int16", 2}, Expected{DT_INT8, 6, "int8", 1},
        Expected{DT_COMPLEX64, 8, "complex64", 8}, Expected{DT_UINT16, 17, "uint16", 2},
        Expected{DT_COMPLEX128, 18, "complex128", 16}}) {
    EXPECT_EQ(static_cast<int>(e.dtype), e.number) << e.name;
    EXPECT_EQ(DataTypeName(e.dtype), e.name);
    EXPECT_EQ(DataTypeSize(e.dtype), e.size) << e.name;
    EXPECT_TRUE(IsValidDataType(e.number)) << e.name;
    EXPECT_TRUE(DataTypeIsTrivial(e.dtype)) << e.name;
    auto parsed = DataTypeFromName(e.name);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, e.dtype);
  }
  static_assert(DataTypeToEnum<int8_t>::value == DT_INT8);
  static_assert(DataTypeToEnum<int16_t>::value == DT_INT16);
  static_assert(DataTypeToEnum<uint16_t>::value == DT_UINT16);
  static_assert(DataTypeToEnum<std::complex<float>>::value == DT_COMPLEX64);
  static_assert(DataTypeToEnum<std::complex<double>>::value == DT_COMPLEX128);
  // Numbers TensorFlow has but tensorweave does not (qint8, bfloat16, half, variant, ...).
  for (int unknown : {11, 12, 13, 14, 15, 16, 19, 21, 22, 23}) {
    EXPECT_FALSE(IsValidDataType(unknown)) << unknown;
  }
  auto bad = DataTypeFromName("complex32");
  EXPECT_TRUE(IsInvalidArgument(bad.status()));
  EXPECT_THAT(bad.status().message(), HasSubstr("unknown data type \"complex32\""));
  EXPECT_THAT(bad.status().message(), HasSubstr("int8, string, complex64"));
}

TEST(TensorTest, SmallIntegerAndComplexTensorsHoldCompareAndPrintTheirElements) {
  const Tensor i8 = Tensor::FromVector<int8_t>({-128, 0, 127});
  EXPECT_EQ(i8.dtype(), DT_INT8);
  EXPECT_EQ(i8.TotalBytes(), 3u);
  EXPECT_EQ(i8.DebugString(), "Tensor<int8, [3]>: -128 0 127");
  EXPECT_EQ(Tensor::FromVector<int16_t>({-32768, 32767}).DebugString(),
            "Tensor<int16, [2]>: -32768 32767");
  EXPECT_EQ(Tensor::FromVector<uint16_t>({0, 65535}).DebugString(), "Tensor<uint16, [2]>: 0 65535");
  const Tensor c64 = Tensor::FromVector<std::complex<float>>({{1.5f, -2}, {0, 3}});
  EXPECT_EQ(c64.TotalBytes(), 16u);
  EXPECT_EQ(c64.DebugString(), "Tensor<complex64, [2]>: (1.5,-2) (0,3)");
  const Tensor c128 = Tensor::Scalar<std::complex<double>>({-1, 2.25});
  EXPECT_EQ(c128.DebugString(), "Tensor<complex128, []>: (-1,2.25)");
  EXPECT_EQ(c128.scalar<std::complex<double>>(), std::complex<double>(-1, 2.25));

  EXPECT_EQ(i8, Tensor::FromVector<int8_t>({-128, 0, 127}));
  EXPECT_NE(i8, Tensor::FromVector<int8_t>({-128, 1, 127}));
  EXPECT_NE(Tensor::FromVector<int16_t>({1}), Tensor::FromVector<uint16_t>({1}));
  EXPECT_EQ(c64, Tensor::FromVector<std::complex<float>>({{1.5f, -2}, {0, 3}}));
  EXPECT_NE(c64, Tensor::FromVector<std::complex<float>>({{1.5f, -2}, {0, -3}}));
  auto rows = Tensor::FromVector<std::complex<double>>({{1, 2}, {3, 4}, {5, 6}, {7, 8}},
                                                       TensorShape({2, 2}))
                  .Slice(1, 2);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->DebugString(), "Tensor<complex128, [1,2]>: (5,6) (7,8)");
}

TEST(TensorDeathTest, WrongElementTypeIsAProgrammingError) {
  Tensor t = Tensor::FromVector<float>({1});
  EXPECT_DEATH(t.flat<int32_t>(), "element type int32 requested from a float tensor");
}

}  // namespace
}  // namespace tw
