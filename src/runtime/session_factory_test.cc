#include "src/runtime/session_factory.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensorweave/session.h"
#include "testing/ports.h"

namespace tw {
namespace {

// Answers every target it is asked for with Unimplemented naming it, so a test can tell
// which factory was chosen.
class NamingFactory final : public SessionFactory {
 public:
  explicit NamingFactory(std::string name) : name_(std::move(name)) {}
  StatusOr<std::unique_ptr<Session>> NewSession(const SessionOptions& options) override {
    return errors::Unimplemented(name_, " for ", options.target);
  }

 private:
  const std::string name_;
};

TW_REGISTER_SESSION_FACTORY("test://", std::make_unique<NamingFactory>("test"));
TW_REGISTER_SESSION_FACTORY("test://special/", std::make_unique<NamingFactory>("special"));

TEST(SessionFactoryTest, UnknownTargetsKeepTheirMessage) {
  for (const std::string target : {"foo://x", "localhost:2222", " ", "grpc:/x"}) {
    auto session = Session::Create({.target = target});
    ASSERT_FALSE(session.ok()) << target;
    EXPECT_TRUE(IsNotFound(session.status())) << session.status();
    EXPECT_EQ(session.status().message(),
              "session target \"" + target +
                  "\" is not supported; use \"\" (in-process) or grpc://host:port");
  }
}

TEST(SessionFactoryTest, TheEmptyTargetIsInProcessAndGrpcIsRegisteredByTheTransport) {
  auto local = Session::Create();
  ASSERT_TRUE(local.ok()) << local.status();
  EXPECT_TRUE((*local)->Close().ok());
  // grpc:// comes from src/rpc's registrar; creating a session does not connect.
  auto remote = Session::Create({.target = "grpc://localhost:1"});
  ASSERT_TRUE(remote.ok()) << remote.status();
}

// TensorFlow's Session.reset: NotFound for a target no factory serves; over gRPC the
// session's operation timeout bounds it (DeadlineExceeded while no master answers, not a
// fixed limit), and with none an unreachable master is Unavailable at once.
TEST(SessionFactoryTest, ResetOfAnUnknownTargetIsNotFoundAndHonoursTheOperationTimeout) {
  Status unknown = ResetContainers({.target = "nonexistent"}, {"test0"});
  EXPECT_TRUE(IsNotFound(unknown)) << unknown;
  const std::string nobody = "grpc://127.0.0.1:" + std::to_string(testing::PickUnusedPort());
  Status timed_out =
      ResetContainers({.target = nobody, .operation_timeout = absl::Milliseconds(200)}, {"test0"});
  EXPECT_TRUE(IsDeadlineExceeded(timed_out)) << timed_out;
  Status unreachable = ResetContainers({.target = nobody}, {"test0"});
  EXPECT_TRUE(IsUnavailable(unreachable)) << unreachable;
}

TEST(SessionFactoryTest, TheLongestRegisteredPrefixWins) {
  auto plain = Session::Create({.target = "test://a"});
  EXPECT_EQ(plain.status().message(), "test for test://a");
  auto special = Session::Create({.target = "test://special/b"});
  EXPECT_EQ(special.status().message(), "special for test://special/b");
  auto found = SessionFactory::ForTarget("test://special/");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ((*found)->NewSession({.target = "x"}).status().message(), "special for x");
}

}  // namespace
}  // namespace tw
