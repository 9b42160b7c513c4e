#include "tensorweave/device_name.h"

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

TEST(DeviceNameTest, ParsesTheFullForm) {
  DeviceName d = P("/job:ps/replica:0/task:1/device:CPU:0");
  EXPECT_EQ(d.job, "ps");
  EXPECT_EQ(d.replica, 0);
  EXPECT_EQ(d.task, 1);
  EXPECT_EQ(d.type, "CPU");
  EXPECT_EQ(d.id, 0);
  EXPECT_TRUE(d.IsFullySpecified());
  EXPECT_EQ(d.ToString(), "/job:ps/replica:0/task:1/device:CPU:0");
  EXPECT_EQ(DeviceName::Full("localhost", 0, 0, "cpu", 0).ToString(),
            "/job:localhost/replica:0/task:0/device:CPU:0");
}

TEST(DeviceNameTest, TaskNameIsTheFullTaskPrefix) {
  EXPECT_EQ(DeviceName::TaskName("ps", 3), "/job:ps/replica:0/task:3");
  EXPECT_EQ(DeviceName::TaskName("worker", 0), "/job:worker/replica:0/task:0");
  // It parses back to the same job and task, with no device part.
  DeviceName d = P(DeviceName::TaskName("chief", 12));
  EXPECT_EQ(d.job, "chief");
  EXPECT_EQ(d.replica, 0);
  EXPECT_EQ(d.task, 12);
  EXPECT_FALSE(d.type.has_value());
  EXPECT_FALSE(d.id.has_value());
}

TEST(DeviceNameTest, TaskOfCutsTheDevicePart) {
  EXPECT_EQ(DeviceName::TaskOf("/job:ps/replica:0/task:1/device:CPU:0"),
            "/job:ps/replica:0/task:1");
  EXPECT_EQ(DeviceName::TaskOf(DeviceName::Full("worker", 0, 7, "CPU", 0).ToString()),
            DeviceName::TaskName("worker", 7));
  // Without a device part the name is the task already.
  EXPECT_EQ(DeviceName::TaskOf("/job:ps/replica:0/task:1"), "/job:ps/replica:0/task:1");
  EXPECT_EQ(DeviceName::TaskOf(""), "");
  // Only "/device:" starts the device part; the legacy "/cpu:0" form is left as it is.
  EXPECT_EQ(DeviceName::TaskOf("/job:a/replica:0/task:0/cpu:0"), "/job:a/replica:0/task:0/cpu:0");
}

TEST(DeviceNameTest, ParsesPartialSpecifications) {
  EXPECT_EQ(P("/job:ps").ToString(), "/job:ps");
  EXPECT_EQ(P("/task:1").ToString(), "/task:1");
  EXPECT_EQ(P("/job:worker/task:3").ToString(), "/job:worker/task:3");
  DeviceName any_cpu = P("/device:CPU:*");
  EXPECT_EQ(any_cpu.type, "CPU");
  EXPECT_FALSE(any_cpu.id.has_value());
  EXPECT_EQ(any_cpu.ToString(), "/device:CPU:*");
  EXPECT_FALSE(P("/job:ps/task:*").task.has_value());
  EXPECT_EQ(P("").ToString(), "");
  EXPECT_EQ(P("/"), DeviceName());  // TF reads a lone "/" as the empty spec too
  EXPECT_EQ(P("/job:*/device:GPU/replica:4").ToString(), "/replica:4/device:GPU:*");
  EXPECT_EQ(P("/job:*/replica:4/device:myspecialdevice:13").ToString(),
            "/replica:4/device:myspecialdevice:13");
  EXPECT_EQ(P("/job:foo_bar/replica:1/task:2/gpu:3").ToString(),
            "/job:foo_bar/replica:1/task:2/device:GPU:3");
  EXPECT_FALSE(P("/job:ps").IsFullySpecified());
}

TEST(DeviceNameTest, ParsesLegacyForms) {
  EXPECT_EQ(P("/cpu:0").ToString(), "/device:CPU:0");
  EXPECT_EQ(P("/job:ps/task:0/cpu:0").ToString(), "/job:ps/task:0/device:CPU:0");
  EXPECT_EQ(P("/gpu:1").type, "GPU");
  EXPECT_EQ(P("/CPU:2").ToString(), "/device:CPU:2");
  EXPECT_EQ(P("/GPU:*").ToString(), "/device:GPU:*");
  EXPECT_EQ(P("/device:cpu:2").ToString(), "/device:CPU:2");
  // Order of the parts does not matter; canonical output is ordered.
  EXPECT_EQ(P("/task:2/job:ps").ToString(), "/job:ps/task:2");
}

TEST(DeviceNameTest, InvalidNamesNameThePart) {
  struct Bad {
    const char* name;
    const char* message;
  };
  for (const Bad& b : std::vector<Bad>{
           {"job:ps", "it must start with '/'"},
           {"/job:1ps", "job name \"1ps\" must match"},
           {"/job:ps/task:x", "task \"x\" must be an integer >= 0 or *"},
           {"/replica:-1", "replica \"-1\" must be an integer"},
           {"/job:ps/job:worker", "job is given twice"},
           {"/job:ps//task:0", "empty part"},
           {"/job", "part \"job\" has no ':'"},
           {"/device:C-PU:0", "device type \"C-PU\""},
           {"/cpu:0/gpu:0", "device is given twice"},
           {"/device:CPU:zero", "device id \"zero\""},
           // Only cpu and gpu have a legacy form: any other field is unknown, as in TF.
           {"/job:foo/replica:1/task:2/bar:3", "unknown field \"bar\" in part \"bar:3\""},
           {"/Cpu:0", "unknown field \"Cpu\""},
           {"/job:foo/replica:1/task:2/gpu:3/extra", "part \"extra\" has no ':'"},
           {"/job:foo/", "empty part"},
           {"//", "empty part"},
           {"/job:123/replica:1/task:2/gpu:3", "job name \"123\""},
           {"/job:foo/replica:1/task:-2/gpu:3", "task \"-2\""},
           {"/job:foo/replica:1/task:2/device:gpu:", "device id \"\""},
       }) {
    auto d = DeviceName::Parse(b.name);
    ASSERT_FALSE(d.ok()) << b.name;
    EXPECT_TRUE(IsInvalidArgument(d.status()));
    EXPECT_THAT(std::string(d.status().message()), HasSubstr(b.message)) << b.name;
    EXPECT_THAT(std::string(d.status().message()), HasSubstr(b.name));
  }
}

TEST(DeviceNameTest, MergeCombinesPartsAndReportsConflicts) {
  DeviceName d = P("/job:ps");
  ASSERT_TRUE(d.MergeFrom(P("/task:1/device:CPU:0")).ok());
  EXPECT_EQ(d.ToString(), "/job:ps/task:1/device:CPU:0");
  ASSERT_TRUE(d.MergeFrom(P("/job:ps")).ok());  // same value is fine
  Status s = d.MergeFrom(P("/job:worker/task:1"));
  EXPECT_TRUE(IsInvalidArgument(s));
  EXPECT_EQ(s.message(),
            "Cannot merge devices with incompatible jobs: '/job:ps/task:1/device:CPU:0' and "
            "'/job:worker/task:1'");
  EXPECT_EQ(d.ToString(), "/job:ps/task:1/device:CPU:0");  // unchanged on conflict
}

// TF's MergeDevNames cases: merging is symmetric, wildcards yield to values, and each
// conflicting part is named with TF's words.
TEST(DeviceNameTest, MergeFollowsTensorFlowsCases) {
  auto merged = [](std::string_view a, std::string_view b) {
    DeviceName ab = P(a), ba = P(b);
    EXPECT_TRUE(ab.MergeFrom(P(b)).ok()) << a << " + " << b;
    EXPECT_TRUE(ba.MergeFrom(P(a)).ok()) << b << " + " << a;
    EXPECT_EQ(ab, ba) << a << " + " << b;
    return ab.ToString();
  };
  EXPECT_EQ(merged("", ""), "");
  EXPECT_EQ(merged("/job:foo/replica:1/task:2/cpu:1", "/job:foo/replica:1/task:2/cpu:1"),
            "/job:foo/replica:1/task:2/device:CPU:1");
  EXPECT_EQ(merged("", "/replica:2"), "/replica:2");
  EXPECT_EQ(merged("/job:foo", "/gpu:1"), "/job:foo/device:GPU:1");
  EXPECT_EQ(merged("/job:foo/replica:0", "/replica:0/task:1"), "/job:foo/replica:0/task:1");
  EXPECT_EQ(merged("/gpu:*", "/gpu:*"), "/device:GPU:*");
  EXPECT_EQ(merged("/gpu:1", "/gpu:*"), "/device:GPU:1");

  auto conflict = [](std::string_view a, std::string_view b) {
    DeviceName d = P(a);
    Status s = d.MergeFrom(P(b));
    EXPECT_TRUE(IsInvalidArgument(s)) << a << " + " << b << ": " << s;
    return std::string(s.message());
  };
  EXPECT_EQ(conflict("/job:foo", "/job:bar"),
            "Cannot merge devices with incompatible jobs: '/job:foo' and '/job:bar'");
  EXPECT_EQ(conflict("/replica:0", "/replica:1"),
            "Cannot merge devices with incompatible replicas: '/replica:0' and '/replica:1'");
  EXPECT_EQ(conflict("/task:0", "/task:1"),
            "Cannot merge devices with incompatible tasks: '/task:0' and '/task:1'");
  EXPECT_EQ(conflict("/gpu:*", "/cpu:*"),
            "Cannot merge devices with incompatible types: '/device:GPU:*' and "
            "'/device:CPU:*'");
  EXPECT_EQ(conflict("/gpu:0", "/gpu:1"),
            "Cannot merge devices with incompatible ids: '/device:GPU:0' and '/device:GPU:1'");
  // As in TF, the first name is quoted with the parts merged before the conflict.
  EXPECT_EQ(conflict("/job:a/task:0", "/replica:1/task:1"),
            "Cannot merge devices with incompatible tasks: '/job:a/replica:1/task:0' and "
            "'/replica:1/task:1'");
}

TEST(DeviceNameTest, OverrideLetsTheInnerSpecWin) {
  DeviceName outer = P("/job:ps/task:0");
  outer.OverrideWith(P("/task:3"));
  EXPECT_EQ(outer.ToString(), "/job:ps/task:3");
}

TEST(DeviceNameTest, SatisfiedByMatchesSetPartsOnly) {
  const DeviceName dev = P("/job:ps/replica:0/task:1/device:CPU:0");
  EXPECT_TRUE(P("/job:ps").IsSatisfiedBy(dev));
  EXPECT_TRUE(P("/task:1/device:CPU:*").IsSatisfiedBy(dev));
  EXPECT_TRUE(P("").IsSatisfiedBy(dev));
  EXPECT_FALSE(P("/job:worker").IsSatisfiedBy(dev));
  EXPECT_FALSE(P("/job:ps/task:0").IsSatisfiedBy(dev));
  EXPECT_FALSE(P("/device:GPU:0").IsSatisfiedBy(dev));
}

}  // namespace
}  // namespace tw
