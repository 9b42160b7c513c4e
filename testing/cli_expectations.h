// Test helper: what every `tw` command owes its user on bad input.
#ifndef TENSORWEAVE_TESTING_CLI_EXPECTATIONS_H_
#define TENSORWEAVE_TESTING_CLI_EXPECTATIONS_H_

#include <algorithm>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/subprocess.h"

namespace tw::testing {

// Exit 1, one line on stderr containing `message`, no abort or stack trace, and nothing on
// stdout (so `tw k8s tfjob ... | kubectl apply -f -` applies nothing).
inline void ExpectCleanFailure(const ProcessResult& r, const std::string& message) {
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, ::testing::HasSubstr(message));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_THAT(r.err, ::testing::Not(::testing::HasSubstr("terminate")));
  EXPECT_TRUE(r.out.empty()) << r.out;
}

}  // namespace tw::testing

#endif  // TENSORWEAVE_TESTING_CLI_EXPECTATIONS_H_
