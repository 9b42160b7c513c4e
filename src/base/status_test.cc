#include "tensorweave/status.h"

#include <string_view>

#include "gtest/gtest.h"

namespace tw {
namespace {

StatusOr<int> Half(int x) {
  if (x % 2 != 0) return errors::InvalidArgument("odd value ", x);
  return x / 2;
}

StatusOr<int> Quarter(int x) {
  TW_ASSIGN_OR_RETURN(int half, Half(x));
  TW_ASSIGN_OR_RETURN(half, Half(half));
  return half;
}

Status CheckEven(int x) {
  TW_RETURN_IF_ERROR(Half(x).status());
  return OkStatus();
}

TEST(StatusTest, ErrorConstructorsConcatenateMixedArguments) {
  const std::string_view job = "ps";
  Status s = errors::NotFound("No task with index ", 3, " in job \"", job, "\" (", 1.5, ")");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "No task with index 3 in job \"ps\" (1.5)");
  EXPECT_TRUE(IsOutOfRange(errors::OutOfRange("done")));
  EXPECT_TRUE(IsUnavailable(errors::Unavailable("gone")));
  EXPECT_FALSE(IsUnavailable(errors::Aborted("restarted")));
}

TEST(StatusTest, AssignOrReturnPropagatesTheFirstError) {
  EXPECT_EQ(*Quarter(12), 3);
  Status s = Quarter(6).status();  // 6 -> 3, and 3 is odd
  EXPECT_TRUE(IsInvalidArgument(s));
  EXPECT_EQ(s.message(), "odd value 3");
}

TEST(StatusTest, ReturnIfErrorStopsOnError) {
  EXPECT_TRUE(CheckEven(4).ok());
  EXPECT_EQ(CheckEven(5).message(), "odd value 5");
}

TEST(StatusTest, AnnotateKeepsCodeAndPrefixesMessage) {
  Status s = errors::Annotate(errors::Unavailable("connection refused"), "From /job:ps/task:0: ");
  EXPECT_TRUE(IsUnavailable(s));
  EXPECT_EQ(s.message(), "From /job:ps/task:0: connection refused");
  EXPECT_TRUE(errors::Annotate(OkStatus(), "x").ok());
}

}  // namespace
}  // namespace tw
