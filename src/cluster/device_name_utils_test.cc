// Cases modelled on TensorFlow's device_name_utils_test: the same questions, asked of
// tensorweave's DeviceName.
#include "src/cluster/device_name_utils.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tw {
namespace {

using ::testing::HasSubstr;

DeviceName P(std::string_view s) {
  auto d = DeviceName::Parse(s);
  EXPECT_TRUE(d.ok()) << s << ": " << d.status();
  return d.ok() ? *d : DeviceName();
}

bool IsSpec(std::string_view less, std::string_view more) {
  return IsSpecification(P(less), P(more));
}

bool IsComplete(std::string_view pattern, std::string_view name) {
  return IsCompleteSpecification(P(pattern), P(name));
}

TEST(DeviceNameUtilsTest, IsSpecificationNeedsEveryPartThePatternSets) {
  const char* full = "/job:work/replica:1/task:2/gpu:3";
  EXPECT_TRUE(IsSpec("/job:*", full));
  EXPECT_TRUE(IsSpec("/job:*", "/replica:1"));  // a wildcard sets nothing
  EXPECT_TRUE(IsSpec("/job:*/replica:*", full));
  EXPECT_TRUE(IsSpec("/job:work/replica:1/gpu:*", full));
  EXPECT_TRUE(IsSpec("/job:work/replica:1/gpu:3", full));
  EXPECT_TRUE(IsSpec("/job:work/replica:*/task:2", full));
  EXPECT_TRUE(IsSpec("/task:2", "/job:*/replica:1/task:2/gpu:3"));
  EXPECT_TRUE(IsSpec("/cpu:0", "/cpu:0"));

  EXPECT_FALSE(IsSpec(full, "/gpu:*"));                       // the other way round
  EXPECT_FALSE(IsSpec("/cpu:*", "/job:*/replica:1/task:2"));  // no type to match
  EXPECT_FALSE(IsSpec("/cpu:*", "/job:*/replica:1/task:2/gpu:1"));
  EXPECT_FALSE(IsSpec("/gpu:2", "/job:worker/replica:1/task:2/gpu:1"));
  EXPECT_FALSE(IsSpec("/job:work/replica:*/task:0", full));
  EXPECT_FALSE(IsSpec("/job:work/replica:0/task:2", "/job:work/replica:*/task:2/gpu:3"));
}

TEST(DeviceNameUtilsTest, IsCompleteSpecificationMatchesAFullName) {
  const char* full = "/job:work/replica:1/task:2/gpu:3";
  EXPECT_TRUE(IsComplete("/job:*", full));
  EXPECT_TRUE(IsComplete("/job:*/replica:*/task:*", full));
  EXPECT_TRUE(IsComplete("/job:*/replica:*/gpu:*", full));
  EXPECT_TRUE(IsComplete("/gpu:*", full));
  EXPECT_FALSE(IsComplete("/cpu:*", full));
  EXPECT_FALSE(IsComplete("/gpu:2", full));
  // TF aborts on an incomplete name; here it is simply not a complete specification.
  EXPECT_FALSE(IsComplete("/job:work", "/job:work/replica:1"));
}

TEST(DeviceNameUtilsTest, SameAddressSpaceIsTheSameJobReplicaAndTask) {
  EXPECT_TRUE(
      IsSameAddressSpace("/job:foo/replica:1/task:2/cpu:3", "/job:foo/replica:1/task:2/gpu:4"));
  EXPECT_FALSE(
      IsSameAddressSpace("/job:foo/replica:1/task:2/cpu:3", "/job:foo/replica:1/task:3/gpu:4"));
  EXPECT_FALSE(
      IsSameAddressSpace("/job:foo/replica:1/task:2/cpu:3", "/job:foo/replica:10/task:2/gpu:4"));
  EXPECT_FALSE(
      IsSameAddressSpace("/job:foo/replica:1/task:2/cpu:3", "/job:bar/replica:1/task:2/gpu:4"));
  // Unset parts never match, even on both sides; names that do not parse are not alike.
  EXPECT_FALSE(IsSameAddressSpace("/job:foo/task:2/cpu:0", "/job:foo/task:2/cpu:1"));
  EXPECT_FALSE(
      IsSameAddressSpace("/job:foo/replica:1/task:2/bar:3", "/job:foo/replica:1/task:2/bar:3"));
  EXPECT_TRUE(IsSameAddressSpace(P("/job:a/replica:0/task:0"), P("/job:a/replica:0/task:0/cpu:0")));
}

TEST(DeviceNameUtilsTest, GetTaskNameNeedsJobReplicaAndTask) {
  EXPECT_EQ(GetTaskName(P("/job:foo/replica:1/task:2/device:CPU:3")), "/job:foo/replica:1/task:2");
  EXPECT_EQ(GetTaskName(P("/task:2/replica:1/job:foo")), "/job:foo/replica:1/task:2");
  EXPECT_EQ(GetTaskName(P("/job:foo/task:2/cpu:0")), std::nullopt);
  EXPECT_EQ(GetTaskName(P("")), std::nullopt);
}

TEST(DeviceNameUtilsTest, SplitDeviceNameCutsTaskFromLocalDevice) {
  auto split = SplitDeviceName("/job:foo/replica:1/task:2/cpu:1");
  ASSERT_TRUE(split.has_value());
  EXPECT_EQ(split->task, "/job:foo/replica:1/task:2");
  EXPECT_EQ(split->device, "CPU:1");
  split = SplitDeviceName("/job:foo/cpu:1/task:2/replica:1");  // any order in
  ASSERT_TRUE(split.has_value());
  EXPECT_EQ(split->task, "/job:foo/replica:1/task:2");  // canonical order out
  EXPECT_EQ(split->device, "CPU:1");
  split = SplitDeviceName("/gpu:3");
  ASSERT_TRUE(split.has_value());
  EXPECT_EQ(split->task, "");
  EXPECT_EQ(split->device, "GPU:3");
  split = SplitDeviceName("/device:myspecialdevice:3");
  ASSERT_TRUE(split.has_value());
  EXPECT_EQ(split->device, "myspecialdevice:3");

  EXPECT_FALSE(SplitDeviceName("gpu:3").has_value());                      // no leading '/'
  EXPECT_FALSE(SplitDeviceName("/job:foo/task:2/replica:1").has_value());  // no device
  EXPECT_FALSE(SplitDeviceName("/job:foo/gpu:*").has_value());             // no device id
}

TEST(DeviceNameUtilsTest, LocalNamesAreTheDevicePart) {
  EXPECT_EQ(LocalDeviceName("CPU", 1), "/device:CPU:1");
  EXPECT_EQ(LocalDeviceName("MySpecialDevice", 13), "/device:MySpecialDevice:13");
  EXPECT_EQ(LocalDeviceName("/job:foo/replica:1/task:2/device:CPU:3").value_or(""),
            "/device:CPU:3");
  EXPECT_EQ(LocalDeviceName("/job:foo/replica:1/task:2/cpu:3").value_or(""), "/device:CPU:3");
  EXPECT_EQ(LocalDeviceName("/job:foo/replica:1/task:2/device:abc:73").value_or(""),
            "/device:abc:73");
  StatusOr<std::string> none = LocalDeviceName("/job:foo/replica:1/task:2");
  EXPECT_TRUE(IsInvalidArgument(none.status()));
  EXPECT_THAT(std::string(none.status().message()), HasSubstr("/job:foo/replica:1/task:2"));
  EXPECT_TRUE(IsInvalidArgument(LocalDeviceName("/bar:3").status()));
}

TEST(DeviceNameUtilsTest, ParseLocalNameTakesTypeAndIdOnly) {
  StatusOr<DeviceName> cpu = ParseLocalDeviceName("CPU:10");
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  EXPECT_EQ(cpu->type, "CPU");
  EXPECT_EQ(cpu->id, 10);
  EXPECT_EQ(ParseLocalDeviceName("myspecialdevice:13").value_or(DeviceName()).ToString(),
            "/device:myspecialdevice:13");
  for (const char* bad : {"cpu:abc", "abc:", "abc", "myspecialdevice", "CPU:*", "*:0",
                          "/device:CPU:0", "job:ps", "CPU:0:1", ""}) {
    StatusOr<DeviceName> d = ParseLocalDeviceName(bad);
    EXPECT_TRUE(IsInvalidArgument(d.status())) << bad;
    EXPECT_THAT(std::string(d.status().message()), HasSubstr("must be TYPE:ID")) << bad;
  }
}

TEST(DeviceNameUtilsTest, CanonicalNameFillsUnsetPartsFromTheBasename) {
  const char* base = "/job:foo/replica:10/task:0/device:CPU:0";
  EXPECT_EQ(CanonicalDeviceName("/job:foo/replica:10/task:0/device:CPU:1", base).value_or(""),
            "/job:foo/replica:10/task:0/device:CPU:1");
  EXPECT_EQ(CanonicalDeviceName("/job:foo/task:0/replica:10/cpu:1", base).value_or(""),
            "/job:foo/replica:10/task:0/device:CPU:1");
  EXPECT_EQ(CanonicalDeviceName("CPU:1", base).value_or(""),
            "/job:foo/replica:10/task:0/device:CPU:1");
  EXPECT_EQ(CanonicalDeviceName("/task:3", base).value_or(""),
            "/job:foo/replica:10/task:3/device:CPU:0");

  StatusOr<std::string> bad = CanonicalDeviceName("/job:foo/task:0/replica/cpu:1", base);
  EXPECT_TRUE(IsInvalidArgument(bad.status()));
  EXPECT_THAT(std::string(bad.status().message()),
              HasSubstr("Could not parse \"/job:foo/task:0/replica/cpu:1\""));
  // The basename must parse and be complete.
  bad = CanonicalDeviceName("/device:CPU:0", "/device:CPU:0");
  EXPECT_TRUE(IsInvalidArgument(bad.status()));
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("should be fully specified"));
  bad = CanonicalDeviceName("/device:CPU:0", "/job:foo/task:0/replica/cpu:1");
  EXPECT_TRUE(IsInvalidArgument(bad.status()));
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("Could not parse basename"));
}

}  // namespace
}  // namespace tw
