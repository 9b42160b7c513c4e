// FileAccessPolicy against a real directory tree: what is inside, what only looks inside
// (symbolic links, ".."), and the messages.
#include "src/framework/file_access.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tw {
namespace {

using ::testing::HasSubstr;

class FileAccessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = getenv("TMPDIR");
    std::string templ = std::string(tmp != nullptr ? tmp : "/tmp") + "/tw_file_access_XXXXXX";
    ASSERT_NE(mkdtemp(templ.data()), nullptr);
    root_ = std::filesystem::canonical(templ).string();
    allowed_ = root_ + "/allowed";
    outside_ = root_ + "/outside";
    std::filesystem::create_directories(allowed_ + "/sub");
    std::filesystem::create_directories(outside_);
    std::filesystem::create_directory_symlink(outside_, allowed_ + "/link_out");
    std::filesystem::create_directory_symlink(allowed_ + "/sub", outside_ + "/link_in");
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  FileAccessPolicy Allow(std::vector<std::string> dirs) {
    auto policy = FileAccessPolicy::AllowDirectories(dirs, "test.dirs");
    EXPECT_TRUE(policy.ok()) << policy.status();
    return *policy;
  }

  std::string root_, allowed_, outside_;
};

TEST_F(FileAccessTest, PathsInsideTheAllowedDirectoriesAreAllowed) {
  const FileAccessPolicy policy = Allow({allowed_});
  for (const std::string& path :
       {allowed_ + "/model.ckpt-1", allowed_ + "/sub/model", allowed_ + "//sub/./model",
        allowed_ + "/sub/../model", outside_ + "/link_in/model",
        // Not there yet: the directory that exists on the way decides.
        allowed_ + "/new/deeper/model"}) {
    Status s = policy.Check(path, "checkpoint path");
    EXPECT_TRUE(s.ok()) << path << ": " << s;
  }
}

TEST_F(FileAccessTest, PathsThatLeaveThemArePermissionDeniedNamingPathAndDirectories) {
  const FileAccessPolicy policy = Allow({allowed_, root_ + "/also"});
  for (const std::string& path :
       {outside_ + "/model", allowed_ + "/../outside/model", allowed_ + "/link_out/model",
        allowed_ + "/link_out/new/model", allowed_ + "/missing/../../outside/model", allowed_,
        root_ + "/allowed2/model", std::string("/etc/passwd"), std::string("relative/model")}) {
    Status s = policy.Check(path, "checkpoint path");
    EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << path << ": " << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr("checkpoint path \"" + path + "\""));
    EXPECT_THAT(std::string(s.message()),
                HasSubstr("allowed: " + allowed_ + ", " + root_ + "/also"));
  }
}

TEST_F(FileAccessTest, RelativePathsAndDirectoriesAreTakenFromTheWorkingDirectory) {
  const std::string cwd = std::filesystem::current_path().string();
  ASSERT_EQ(chdir(root_.c_str()), 0);
  const FileAccessPolicy policy = Allow({"allowed"});
  EXPECT_EQ(policy.directories(), std::vector<std::string>{allowed_});
  EXPECT_TRUE(policy.Check("allowed/model", "path").ok());
  EXPECT_EQ(policy.Check("outside/model", "path").code(), absl::StatusCode::kPermissionDenied);
  ASSERT_EQ(chdir(cwd.c_str()), 0);
}

TEST_F(FileAccessTest, ADirectoryThatDoesNotExistYetAllowsNothingUntilItDoes) {
  const FileAccessPolicy policy = Allow({root_ + "/later"});
  EXPECT_EQ(policy.Check(root_ + "/later/model", "path").code(),
            absl::StatusCode::kPermissionDenied);
  std::filesystem::create_directory(root_ + "/later");
  EXPECT_TRUE(policy.Check(root_ + "/later/model", "path").ok());
}

TEST_F(FileAccessTest, TheDefaultAllowsNothingAndUnrestrictedEverything) {
  Status s = FileAccessPolicy().Check(allowed_ + "/model", "checkpoint path");
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("allowed: none"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("ServerOptions.allowed_directories"));
  EXPECT_TRUE(FileAccessPolicy::Unrestricted().Check("/etc/passwd", "path").ok());
}

TEST_F(FileAccessTest, NamesThatAreNoFileAndBadDirectoriesAreInvalidArgument) {
  const FileAccessPolicy policy = Allow({allowed_});
  for (const std::string& path :
       {std::string(), allowed_ + "/", allowed_ + "/..", allowed_ + "/.", std::string("a\0b", 3)}) {
    EXPECT_EQ(policy.Check(path, "path").code(), absl::StatusCode::kInvalidArgument) << path;
  }
  auto empty = FileAccessPolicy::AllowDirectories({allowed_, ""}, "ServerOptions.dirs");
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(empty.status().message()), HasSubstr("ServerOptions.dirs"));
}

}  // namespace
}  // namespace tw
