// SaveVariables, MergeCheckpoint and RestoreVariables in an in-process session.
#include "tensorweave/ops/io_ops.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/checkpoint/checkpoint_file.h"
#include "tensorweave/ops.h"
#include "tensorweave/session.h"

namespace tw {
namespace {

using ::testing::HasSubstr;

std::string Message(const Status& s) { return std::string(s.message()); }

class IoOpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = getenv("TMPDIR");
    std::string templ = std::string(tmp != nullptr ? tmp : "/tmp") + "/tw_io_ops_XXXXXX";
    ASSERT_NE(mkdtemp(templ.data()), nullptr);
    dir_ = *checkpoint::CanonicalDirectory(templ);
    prefix_ = dir_ + "/ckpt-7";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Saves `vars` (whole) as a one-shard checkpoint at `prefix`.
  Status SaveAll(ClientSession& session, Output prefix_input, const std::string& prefix,
                 Operation merge) {
    return session.Run({{prefix_input, Tensor::Scalar<std::string>(prefix)}}, {}, {merge}).status();
  }

  std::string dir_, prefix_;
};

TEST_F(IoOpsTest, SaveThenRestoreOverwritesVariables) {
  Scope root = Scope::NewRootScope();
  auto a = ops::MakeVariable(root, "a", DT_FLOAT, {2, 2});
  auto s = ops::MakeVariable(root, "s", DT_STRING, {});
  auto init = ops::Group(
      root,
      {ops::Assign(root, a, Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({2, 2}))).op(),
       ops::Assign(root, s, std::string("hello")).op()});
  auto prefix = ops::Placeholder(root.WithOpName("prefix"), DT_STRING);
  std::vector<ops::CheckpointSlice> slices{{.name = "a"}, {.name = "s"}};
  auto save = ops::SaveVariables(root, prefix, {a, s}, slices, 0, 1, dir_);
  auto merge = ops::MergeCheckpoint(root.WithControlDependencies({save}), prefix, 1, dir_);
  auto restore = ops::RestoreVariables(root, prefix, {a, s}, slices, dir_);
  auto clobber = ops::Group(root, {ops::Assign(root, a, Tensor(DT_FLOAT, TensorShape({2, 2}))).op(),
                                   ops::Assign(root, s, std::string("other")).op()});
  auto read_a = ops::ReadVariable(root, a);
  auto read_s = ops::ReadVariable(root, s);
  ClientSession session(root);
  ASSERT_TRUE(session.Run({}, {}, {init}).ok());
  Status saved = SaveAll(session, prefix, prefix_, merge);
  ASSERT_TRUE(saved.ok()) << saved;
  EXPECT_TRUE(checkpoint::FileExists(prefix_ + ".index"));
  EXPECT_TRUE(checkpoint::FileExists(prefix_ + ".data-00000-of-00001"));
  ASSERT_TRUE(session.Run({}, {}, {clobber}).ok());
  auto restored = session.Run({{prefix, Tensor::Scalar<std::string>(prefix_)}}, {}, {restore});
  ASSERT_TRUE(restored.ok()) << restored.status();
  auto out = session.Run({}, {read_a, read_s});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0], Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({2, 2})));
  EXPECT_EQ((*out)[1].scalar<std::string>(), "hello");
}

TEST_F(IoOpsTest, RestoresAPartitionedVariableIntoDifferentParts) {
  Scope root = Scope::NewRootScope();
  // Saved as rows [0, 1) and [1, 4) of a [4, 2] variable...
  auto p0 = ops::MakeVariable(root, "p0", DT_INT32, {1, 2});
  auto p1 = ops::MakeVariable(root, "p1", DT_INT32, {3, 2});
  // ...restored as rows [0, 3) and [3, 4).
  auto q0 = ops::MakeVariable(root, "q0", DT_INT32, {3, 2});
  auto q1 = ops::MakeVariable(root, "q1", DT_INT32, {1, 2});
  auto init = ops::Group(
      root, {ops::Assign(root, p0, Tensor::FromVector<int32_t>({0, 1}, {1, 2})).op(),
             ops::Assign(root, p1, Tensor::FromVector<int32_t>({2, 3, 4, 5, 6, 7}, {3, 2})).op()});
  auto prefix = ops::Placeholder(root.WithOpName("prefix"), DT_STRING);
  auto part = [](int64_t offset) {
    return ops::CheckpointSlice{
        .name = "p", .partitioned = true, .full_shape = {4, 2}, .row_offset = offset};
  };
  auto save = ops::SaveVariables(root, prefix, {p0, p1}, {part(0), part(1)}, 0, 1, dir_);
  auto merge = ops::MergeCheckpoint(root.WithControlDependencies({save}), prefix, 1, dir_);
  auto restore = ops::RestoreVariables(root, prefix, {q0, q1}, {part(0), part(3)}, dir_);
  auto read0 = ops::ReadVariable(root, q0);
  auto read1 = ops::ReadVariable(root, q1);
  ClientSession session(root);
  ASSERT_TRUE(session.Run({}, {}, {init}).ok());
  ASSERT_TRUE(SaveAll(session, prefix, prefix_, merge).ok());
  auto restored = session.Run({{prefix, Tensor::Scalar<std::string>(prefix_)}}, {}, {restore});
  ASSERT_TRUE(restored.ok()) << restored.status();
  auto out = session.Run({}, {read0, read1});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0], Tensor::FromVector<int32_t>({0, 1, 2, 3, 4, 5}, {3, 2}));
  EXPECT_EQ((*out)[1], Tensor::FromVector<int32_t>({6, 7}, {1, 2}));
}

// One saved variable "v" (float [3]) and restore ops built by each test.
class IoOpsErrorsTest : public IoOpsTest {
 protected:
  void SetUp() override {
    IoOpsTest::SetUp();
    v_ = ops::MakeVariable(root_, "v", DT_FLOAT, {3});
    prefix_input_ = ops::Placeholder(root_.WithOpName("prefix"), DT_STRING);
    auto init = ops::Assign(root_, v_, Tensor::FromVector<float>({1, 2, 3}));
    auto save = ops::SaveVariables(root_, prefix_input_, {v_}, {{.name = "v"}}, 0, 1, dir_);
    merge_ = ops::MergeCheckpoint(root_.WithControlDependencies({save}), prefix_input_, 1, dir_);
    session_ = std::make_unique<ClientSession>(root_);
    ASSERT_TRUE(session_->Run({}, {}, {init.op()}).ok());
    ASSERT_TRUE(SaveAll(*session_, prefix_input_, prefix_, merge_).ok());
  }

  Status Restore(const ops::Variable& var, const std::string& name,
                 const std::string& prefix = "") {
    auto restore = ops::RestoreVariables(root_, prefix_input_, {var}, {{.name = name}}, dir_);
    return session_
        ->Run({{prefix_input_, Tensor::Scalar<std::string>(prefix.empty() ? prefix_ : prefix)}}, {},
              {restore})
        .status();
  }

  Scope root_ = Scope::NewRootScope();
  ops::Variable v_;
  Output prefix_input_;
  Operation merge_;
  std::unique_ptr<ClientSession> session_;
};

TEST_F(IoOpsErrorsTest, MissingVariableIsNotFoundNamingIt) {
  auto w = ops::MakeVariable(root_, "w", DT_FLOAT, {3});
  Status s = Restore(w, "w");
  EXPECT_TRUE(IsNotFound(s)) << s;
  EXPECT_THAT(Message(s), HasSubstr("variable \"w\" is not in checkpoint " + prefix_));
}

TEST_F(IoOpsErrorsTest, DtypeMismatchNamesVariableAndBothDtypes) {
  auto w = ops::MakeVariable(root_, "w", DT_INT32, {3});
  Status s = Restore(w, "v");
  EXPECT_TRUE(IsInvalidArgument(s)) << s;
  EXPECT_THAT(Message(s), HasSubstr("variable \"v\" has dtype int32"));
  EXPECT_THAT(Message(s), HasSubstr("has dtype float"));
}

TEST_F(IoOpsErrorsTest, ShapeMismatchNamesVariableAndBothShapes) {
  auto w = ops::MakeVariable(root_, "w", DT_FLOAT, {4});
  Status s = Restore(w, "v");
  EXPECT_TRUE(IsInvalidArgument(s)) << s;
  EXPECT_THAT(Message(s), HasSubstr("variable \"v\" has shape [4]"));
  EXPECT_THAT(Message(s), HasSubstr("has shape [3]"));
}

TEST_F(IoOpsErrorsTest, MissingCheckpointIsNotFound) {
  Status s = Restore(v_, "v", dir_ + "/never-saved");
  EXPECT_TRUE(IsNotFound(s)) << s;
  EXPECT_THAT(Message(s), HasSubstr("never-saved.index"));
}

TEST_F(IoOpsErrorsTest, CorruptedDataIsDataLoss) {
  const std::string data = prefix_ + ".data-00000-of-00001";
  std::fstream f(data, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(5);
  f.put('\x7f');
  f.close();
  Status s = Restore(v_, "v");
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_THAT(Message(s), HasSubstr("tensor \"v\""));
  EXPECT_THAT(Message(s), HasSubstr(data));
}

TEST_F(IoOpsErrorsTest, PathsOutsideTheDirectoryAreRefused) {
  for (const std::string& bad :
       {dir_ + "/../escape", std::string("/tmp/elsewhere-ckpt"), std::string("relative-ckpt")}) {
    Status saved = SaveAll(*session_, prefix_input_, bad, merge_);
    EXPECT_TRUE(IsInvalidArgument(saved)) << bad << ": " << saved;
    EXPECT_THAT(Message(saved), HasSubstr("is refused")) << bad;
    Status restored = Restore(v_, "v", bad);
    EXPECT_TRUE(IsInvalidArgument(restored)) << bad << ": " << restored;
  }
  EXPECT_FALSE(checkpoint::FileExists(dir_ + "/../escape.index"));
}

TEST_F(IoOpsErrorsTest, UninitializedVariableIsNotSaved) {
  auto u = ops::MakeVariable(root_, "u", DT_FLOAT, {1});
  auto save = ops::SaveVariables(root_, prefix_input_, {u}, {{.name = "u"}}, 0, 1, dir_);
  auto out = session_->Run({{prefix_input_, Tensor::Scalar<std::string>(dir_ + "/u")}}, {}, {save});
  EXPECT_TRUE(IsFailedPrecondition(out.status())) << out.status();
  EXPECT_THAT(Message(out.status()), HasSubstr("cannot save variable \"u\""));
  // Nothing is left behind, not even a temporary file.
  EXPECT_FALSE(checkpoint::FileExists(dir_ + "/u.data-00000-of-00001"));
  auto entries = checkpoint::ListDirectory(dir_);
  ASSERT_TRUE(entries.ok());
  for (const std::string& e : *entries) EXPECT_THAT(e, ::testing::StartsWith("ckpt-7."));
}

TEST_F(IoOpsErrorsTest, RestoreChangesNothingWhenOneVariableFails) {
  auto w = ops::MakeVariable(root_, "w", DT_FLOAT, {3});
  auto assign_v = ops::Assign(root_, v_, Tensor::FromVector<float>({9, 9, 9}));
  auto restore = ops::RestoreVariables(root_, prefix_input_, {v_, w},
                                       {{.name = "v"}, {.name = "missing"}}, dir_);
  auto read = ops::ReadVariable(root_, v_);
  ASSERT_TRUE(session_->Run({}, {}, {assign_v.op()}).ok());
  auto out = session_->Run({{prefix_input_, Tensor::Scalar<std::string>(prefix_)}}, {}, {restore});
  EXPECT_TRUE(IsNotFound(out.status())) << out.status();
  EXPECT_EQ((*session_->Run({}, {read}))[0], Tensor::FromVector<float>({9, 9, 9}));
}

}  // namespace
}  // namespace tw
