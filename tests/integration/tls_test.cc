// Mutual TLS clusters over loopback: servers and sessions with certificates signed by a
// cluster CA generated at test time with the `openssl` command line, and the callers a TLS
// server must refuse (no certificate, no TLS, a certificate of another CA, a server name
// the certificate does not carry).
//
// Two tests talk gRPC directly instead of through tensorweave: the public API cannot build
// a TLS client without a certificate (TlsOptions needs all three parts), and that is just
// the client an attacker would bring.
#include "tensorweave/tls.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tensorweave/ops.h"
#include "tensorweave/protobuf/service.grpc.pb.h"
#include "tensorweave/server.h"
#include "tensorweave/session.h"
#include "testing/ports.h"
#include "testing/subprocess.h"

namespace tw {
namespace {

using testing::BuiltProgram;
using testing::ChildProcess;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::ProcessResult;
using testing::RunProcess;

namespace fs = std::filesystem;

// The name the "named" certificates carry instead of any address (TlsOptions::server_name).
constexpr char kClusterName[] = "tensorweave-cluster";

// One openssl configuration for every certificate; `-extensions` picks the section.
constexpr char kOpensslConfig[] = R"([req]
distinguished_name = dn
prompt = no
[dn]
CN = unused
[ca]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[task]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = serverAuth,clientAuth
subjectAltName = DNS:localhost,IP:127.0.0.1
[named]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = serverAuth,clientAuth
subjectAltName = DNS:tensorweave-cluster
[client]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = clientAuth
)";

std::string FindOnPath(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const fs::path candidate = fs::path(dirs.substr(start, end - start)) / program;
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
    start = end + 1;
  }
  return "";
}

// Writes a throwaway PKI into a fresh temporary directory:
//   ca        the cluster CA
//   task      signed by ca; SAN localhost and 127.0.0.1; serverAuth and clientAuth
//   named     signed by ca; SAN tensorweave-cluster only; serverAuth and clientAuth
//   client    signed by ca; clientAuth only, no SAN
//   other_ca  an unrelated CA
//   intruder  signed by other_ca; serverAuth and clientAuth, SAN localhost and 127.0.0.1
// Each as <name>.pem and <name>.key.
class Pki {
 public:
  Status Create() {
    std::string tmpl = ::testing::TempDir() + "/tw_tls_XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr) return errors::Internal("mkdtemp failed");
    dir_ = tmpl;
    std::ofstream(dir_ + "/openssl.cnf") << kOpensslConfig;
    openssl_ = FindOnPath("openssl");
    if (openssl_.empty()) {
      return errors::FailedPrecondition("openssl is not installed (scripts/setup.sh installs it)");
    }
    TW_RETURN_IF_ERROR(MakeCa("ca"));
    TW_RETURN_IF_ERROR(MakeCa("other_ca"));
    TW_RETURN_IF_ERROR(MakeLeaf("task", "ca", "task", 2));
    TW_RETURN_IF_ERROR(MakeLeaf("named", "ca", "named", 3));
    TW_RETURN_IF_ERROR(MakeLeaf("client", "ca", "client", 4));
    return MakeLeaf("intruder", "other_ca", "task", 5);
  }
  ~Pki() {
    if (!dir_.empty()) {
      std::error_code ignored;
      fs::remove_all(dir_, ignored);
    }
  }

  std::string Path(const std::string& file) const { return dir_ + "/" + file; }
  // The cluster CA `ca` with the certificate and key of `leaf`.
  TlsOptions Tls(const std::string& ca, const std::string& leaf) const {
    auto tls = LoadTlsFiles(Path(ca + ".pem"), Path(leaf + ".pem"), Path(leaf + ".key"));
    EXPECT_TRUE(tls.ok()) << tls.status();
    return tls.ok() ? *tls : TlsOptions{};
  }
  std::string Read(const std::string& file) const {
    std::ifstream in(Path(file));
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

 private:
  Status Openssl(std::vector<std::string> args) {
    args.insert(args.begin(), openssl_);
    auto r = RunProcess(args, {}, absl::Seconds(30));
    TW_RETURN_IF_ERROR(r.status());
    if (r->exit_code != 0) return errors::Internal("openssl ", args[1], " failed: ", r->err);
    return OkStatus();
  }
  Status MakeCa(const std::string& name) {
    return Openssl({"req", "-x509", "-config", Path("openssl.cnf"), "-extensions", "ca", "-newkey",
                    "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
                    Path(name + ".key"), "-out", Path(name + ".pem"), "-days", "2", "-subj",
                    "/CN=tensorweave test " + name});
  }
  Status MakeLeaf(const std::string& name, const std::string& ca, const std::string& section,
                  int serial) {
    TW_RETURN_IF_ERROR(
        Openssl({"req", "-new", "-config", Path("openssl.cnf"), "-newkey", "ec", "-pkeyopt",
                 "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", Path(name + ".key"), "-out",
                 Path(name + ".csr"), "-subj", "/CN=tensorweave test " + name}));
    return Openssl({"x509", "-req", "-in", Path(name + ".csr"), "-CA", Path(ca + ".pem"), "-CAkey",
                    Path(ca + ".key"), "-set_serial", std::to_string(serial), "-days", "2",
                    "-extfile", Path("openssl.cnf"), "-extensions", section, "-out",
                    Path(name + ".pem")});
  }

  std::string dir_;
  std::string openssl_;
};

class TlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    pki_ = new Pki;
    pki_status_ = new Status(pki_->Create());
  }
  static void TearDownTestSuite() {
    delete pki_;
    delete pki_status_;
    pki_ = nullptr;
    pki_status_ = nullptr;
  }
  void SetUp() override { ASSERT_TRUE(pki_status_->ok()) << *pki_status_; }

  // A started one-task server ("localhost" job, target grpc://localhost:<port>).
  static std::unique_ptr<Server> LocalServer(const TlsOptions& tls) {
    auto server = Server::CreateLocal({.num_threads = 1, .tls = tls});
    EXPECT_TRUE(server.ok()) << server.status();
    return server.ok() ? *std::move(server) : nullptr;
  }

  // One trivial step on `target`; its status.
  static Status RunConst(const std::string& target, const TlsOptions& tls) {
    Scope root = Scope::NewRootScope();
    auto c = ops::Const(root.WithOpName("c"), Tensor::Scalar(1.5f));
    ClientSession session(root, {.target = target, .tls = tls});
    auto out = session.Run({}, {c}, {}, {.timeout = absl::Seconds(20)});
    if (out.ok()) {
      EXPECT_EQ((*out)[0].scalar<float>(), 1.5f);
    }
    return out.status();
  }

  // GetStatus on the worker service at `address` with hand-made gRPC credentials.
  static grpc::Status RawGetStatus(const std::string& address,
                                   std::shared_ptr<grpc::ChannelCredentials> credentials) {
    auto stub = proto::WorkerService::NewStub(grpc::CreateChannel(address, credentials));
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    proto::GetStatusRequest req;
    proto::GetStatusResponse resp;
    return stub->GetStatus(&ctx, req, &resp);
  }

  static Pki* pki_;
  static Status* pki_status_;
};

Pki* TlsTest::pki_ = nullptr;
Status* TlsTest::pki_status_ = nullptr;

// ps:0 holds a variable; a session on worker:0 updates it with a value fed on the worker
// (so the ps pulls it from the worker) and reads it back (the worker pulls from the ps):
// both peer channels and the session's channel use TLS. The ps is addressed by name and the
// worker by IP, so both kinds of SAN are checked.
void RunCrossTaskStep(const TlsOptions& server_tls, const TlsOptions& session_tls,
                      const std::string& ps_host, const std::string& worker_host) {
  ClusterSpec cluster;
  const std::string ps_address = ps_host + ":" + std::to_string(testing::PickUnusedPort());
  const std::string worker_address = worker_host + ":" + std::to_string(testing::PickUnusedPort());
  ASSERT_TRUE(cluster.AddJob("ps", std::vector<std::string>{ps_address}).ok());
  ASSERT_TRUE(cluster.AddJob("worker", std::vector<std::string>{worker_address}).ok());
  ServerOptions options{.bind_host = "127.0.0.1",
                        .num_threads = 2,
                        .wait_for_cluster = absl::Seconds(10),
                        .tls = server_tls};
  auto ps = Server::Create(cluster, "ps", 0, options);
  auto worker = Server::Create(cluster, "worker", 0, options);
  ASSERT_TRUE(ps.ok()) << ps.status();
  ASSERT_TRUE(worker.ok()) << worker.status();
  ASSERT_TRUE((*ps)->Start().ok());
  ASSERT_TRUE((*worker)->Start().ok());

  Scope root = Scope::NewRootScope();
  auto total = ops::MakeVariable(root.WithDevice("/job:ps/task:0"), "total", DT_INT64, {});
  auto init = ops::Assign(root.WithOpName("init"), total, int64_t{10});
  auto count = ops::Placeholder(root.WithOpName("count"), DT_INT64);
  auto add = ops::AssignAdd(root.WithOpName("add"), total, count, {.use_locking = true});
  auto read = ops::ReadVariable(root.WithOpName("read"), total);
  ClientSession session(root, {.target = (*worker)->target(), .tls = session_tls});
  auto a = session.Run({}, {}, {init.op()}, {.timeout = absl::Seconds(30)});
  ASSERT_TRUE(a.ok()) << a.status();
  auto b = session.Run({{count, Tensor::Scalar<int64_t>(32)}}, {}, {add.op()},
                       {.timeout = absl::Seconds(30)});
  ASSERT_TRUE(b.ok()) << b.status();
  auto out = session.Run({}, {read}, {}, {.timeout = absl::Seconds(30)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<int64_t>(), 42);
}

TEST_F(TlsTest, MutualTlsClusterRunsACrossTaskStep) {
  RunCrossTaskStep(pki_->Tls("ca", "task"), pki_->Tls("ca", "client"), "localhost", "127.0.0.1");
}

TEST_F(TlsTest, ServerNameReplacesTheAddressInCertificateChecks) {
  // The "named" certificates carry no address at all, only kClusterName.
  TlsOptions server = pki_->Tls("ca", "named");
  server.server_name = kClusterName;
  TlsOptions client = pki_->Tls("ca", "client");
  client.server_name = kClusterName;
  RunCrossTaskStep(server, client, "localhost", "127.0.0.1");

  // Without the override the name checked is the target's host, which the certificate lacks.
  auto local = LocalServer(server);
  ASSERT_NE(local, nullptr);
  EXPECT_TRUE(RunConst(local->target(), client).ok());
  client.server_name.clear();
  Status refused = RunConst(local->target(), client);
  // Not Unavailable, which callers would retry until their deadlines: it never heals.
  EXPECT_EQ(refused.code(), absl::StatusCode::kUnauthenticated) << refused;
  EXPECT_THAT(std::string(refused.message()),
              HasSubstr("the peer's TLS certificate must name the address dialed"));
}

TEST_F(TlsTest, ClientWithoutACertificateIsRefused) {
  auto server = LocalServer(pki_->Tls("ca", "task"));
  ASSERT_NE(server, nullptr);
  const std::string address = "localhost:" + std::to_string(server->port());
  grpc::SslCredentialsOptions with_cert{.pem_root_certs = pki_->Read("ca.pem"),
                                        .pem_private_key = pki_->Read("client.key"),
                                        .pem_cert_chain = pki_->Read("client.pem")};
  grpc::Status accepted = RawGetStatus(address, grpc::SslCredentials(with_cert));
  EXPECT_TRUE(accepted.ok()) << accepted.error_message();  // the call itself is fine

  // Trusts the server, presents nothing: refused in the handshake, not left waiting.
  grpc::SslCredentialsOptions no_cert{.pem_root_certs = pki_->Read("ca.pem")};
  grpc::Status refused = RawGetStatus(address, grpc::SslCredentials(no_cert));
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::UNAVAILABLE) << refused.error_message();

  // And tensorweave's own API will not even build such a client.
  auto session =
      Session::Create({.target = server->target(), .tls = {.ca_cert_pem = pki_->Read("ca.pem")}});
  EXPECT_TRUE(IsInvalidArgument(session.status())) << session.status();
  EXPECT_THAT(std::string(session.status().message()), HasSubstr("cert_pem"));
}

TEST_F(TlsTest, InsecureClientIsRefused) {
  auto server = LocalServer(pki_->Tls("ca", "task"));
  ASSERT_NE(server, nullptr);
  EXPECT_TRUE(RunConst(server->target(), pki_->Tls("ca", "client")).ok());
  Status refused = RunConst(server->target(), {});
  EXPECT_TRUE(IsUnavailable(refused)) << refused;
  grpc::Status raw = RawGetStatus("localhost:" + std::to_string(server->port()),
                                  grpc::InsecureChannelCredentials());
  EXPECT_EQ(raw.error_code(), grpc::StatusCode::UNAVAILABLE) << raw.error_message();
}

TEST_F(TlsTest, ClientCertificateOfAnotherCaIsRefused) {
  auto server = LocalServer(pki_->Tls("ca", "task"));
  ASSERT_NE(server, nullptr);
  // Trusts the cluster CA (so it accepts the server) but its own certificate is the other
  // CA's: the server refuses it.
  TlsOptions intruder = pki_->Tls("ca", "intruder");
  EXPECT_TRUE(RunConst(server->target(), pki_->Tls("ca", "client")).ok());
  Status refused = RunConst(server->target(), intruder);
  EXPECT_TRUE(IsUnavailable(refused)) << refused;
}

TEST_F(TlsTest, ServerCertificateOfAnotherCaIsRefused) {
  // A server impersonating a task with the other CA's certificate: a cluster client does
  // not trust it, even though the server would accept the client.
  TlsOptions impostor = pki_->Tls("ca", "intruder");
  impostor.ca_cert_pem = pki_->Read("ca.pem");
  auto server = LocalServer(impostor);
  ASSERT_NE(server, nullptr);
  Status refused = RunConst(server->target(), pki_->Tls("ca", "client"));
  EXPECT_TRUE(IsUnavailable(refused)) << refused;
  // Control: a client that trusts the other CA gets through.
  TlsOptions trusting = pki_->Tls("other_ca", "client");
  EXPECT_TRUE(RunConst(server->target(), trusting).ok());
}

TEST_F(TlsTest, AKeyThatDoesNotMatchTheCertificateFailsStart) {
  TlsOptions tls = pki_->Tls("ca", "task");
  tls.key_pem = pki_->Read("client.key");
  auto server = Server::CreateLocal({.num_threads = 1, .tls = tls});
  ASSERT_FALSE(server.ok());
  EXPECT_TRUE(IsUnavailable(server.status())) << server.status();
  EXPECT_THAT(std::string(server.status().message()),
              HasSubstr("(key_pem) does not belong to the certificate"));
}

// PEM blocks whose contents are garbage (a truncated copy, say) fail Start naming the field,
// rather than a server that starts and then drops every connection.
TEST_F(TlsTest, AGarbledCaCertificateOrKeyFailsStart) {
  const std::string garbled =
      "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n";
  const struct {
    std::string TlsOptions::*field;
    std::string pem;
    std::string named;
  } cases[] = {
      {&TlsOptions::ca_cert_pem, garbled, "(ca_cert_pem) does not parse"},
      {&TlsOptions::cert_pem, garbled, "(cert_pem) does not parse"},
      {&TlsOptions::key_pem, "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
       "(key_pem) does not parse"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.named);
    TlsOptions tls = pki_->Tls("ca", "task");
    tls.*c.field = c.pem;
    auto server = Server::CreateLocal({.num_threads = 1, .tls = tls});
    ASSERT_FALSE(server.ok());
    EXPECT_TRUE(IsUnavailable(server.status())) << server.status();
    EXPECT_THAT(std::string(server.status().message()), HasSubstr(c.named));
  }
}

TEST_F(TlsTest, IncompleteTlsOptionsAreInvalidArgument) {
  ClusterSpec cluster;
  ASSERT_TRUE(cluster.AddJob("worker", std::vector<std::string>{"localhost:0"}).ok());
  TlsOptions no_key = pki_->Tls("ca", "task");
  no_key.key_pem.clear();
  auto server = Server::Create(cluster, "worker", 0, {.tls = no_key});
  EXPECT_TRUE(IsInvalidArgument(server.status())) << server.status();
  EXPECT_THAT(std::string(server.status().message()), HasSubstr("key_pem"));

  TlsOptions no_ca = pki_->Tls("ca", "task");
  no_ca.ca_cert_pem.clear();
  auto session = Session::Create({.target = "grpc://localhost:1", .tls = no_ca});
  EXPECT_TRUE(IsInvalidArgument(session.status())) << session.status();
  EXPECT_THAT(std::string(session.status().message()), HasSubstr("ca_cert_pem"));

  auto name_only = Session::Create({.target = "grpc://localhost:1", .tls = {.server_name = "x"}});
  EXPECT_TRUE(IsInvalidArgument(name_only.status())) << name_only.status();
}

// The server's exposure check goes by the bind host's name (127.0.0.1, localhost, ::1), so
// 127.0.0.2, which the kernel routes over loopback, counts as exposed to it: the test
// stays on loopback and still sees the warning.
TEST_F(TlsTest, NoExposureWarningWithTls) {
  ClusterSpec cluster;
  ASSERT_TRUE(cluster.AddJob("worker", std::vector<std::string>{"localhost:0"}).ok());
  for (bool tls : {false, true}) {
    SCOPED_TRACE(tls ? "with TLS" : "without TLS");
    auto server = Server::Create(cluster, "worker", 0,
                                 {.bind_host = "127.0.0.2",
                                  .num_threads = 1,
                                  .tls = tls ? pki_->Tls("ca", "task") : TlsOptions{},
                                  .allowed_directories = {"/srv/ckpt"}});
    ASSERT_TRUE(server.ok()) << server.status();
    ::testing::internal::CaptureStderr();
    Status started = (*server)->Start();
    const std::string log = ::testing::internal::GetCapturedStderr();
    ASSERT_TRUE(started.ok()) << started;
    EXPECT_THAT(log, HasSubstr(tls ? "mutual TLS" : "insecure"));  // the capture works
    if (tls) {
      EXPECT_THAT(log, Not(HasSubstr("without TLS")));
    } else {
      EXPECT_THAT(log, HasSubstr("without TLS: anyone who can reach port"));
      // It names what such a client can do (docs/security.md).
      EXPECT_THAT(log, HasSubstr("can run any graph on this task"));
      EXPECT_THAT(log, HasSubstr("read and overwrite its variables and queues"));
      EXPECT_THAT(log, HasSubstr("stop it (Shutdown)"));
      EXPECT_THAT(log, HasSubstr("read and write files in its allowed directories (/srv/ckpt)"));
      EXPECT_THAT(log, HasSubstr("docs/security.md"));
    }
  }
}

// A server listens on one port, with TLS or without: without, its chunk socket shares it
// (src/rpc/task_port.h); with TLS there is none, chunks stay in gRPC calls, which carry the
// cluster's certificates. Stop closes it.
TEST_F(TlsTest, ServersListenOnOnePortWithOrWithoutTls) {
  ClusterSpec cluster;
  ASSERT_TRUE(cluster.AddJob("worker", std::vector<std::string>{"localhost:0"}).ok());
  for (bool tls : {false, true}) {
    SCOPED_TRACE(tls ? "with TLS" : "without TLS");
    const std::vector<int> before = testing::ListeningPorts(getpid());
    auto server = Server::Create(cluster, "worker", 0,
                                 {.bind_host = "127.0.0.1",
                                  .num_threads = 1,
                                  .tls = tls ? pki_->Tls("ca", "task") : TlsOptions{}});
    ASSERT_TRUE(server.ok()) << server.status();
    ASSERT_TRUE((*server)->Start().ok());
    std::vector<int> expected = before;
    expected.push_back((*server)->port());
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(testing::ListeningPorts(getpid()), expected);
    (*server)->Stop();
    EXPECT_EQ(testing::ListeningPorts(getpid()), before) << "closed by Stop";
  }
}

TEST_F(TlsTest, LoadTlsFilesNamesTheFileAtFault) {
  auto ok = LoadTlsFiles(pki_->Path("ca.pem"), pki_->Path("task.pem"), pki_->Path("task.key"));
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->ca_cert_pem, pki_->Read("ca.pem"));
  EXPECT_EQ(ok->cert_pem, pki_->Read("task.pem"));
  EXPECT_EQ(ok->key_pem, pki_->Read("task.key"));
  EXPECT_TRUE(ok->server_name.empty());

  const std::string missing = pki_->Path("missing.pem");
  const std::string text = pki_->Path("openssl.cnf");
  struct Case {
    std::string ca, cert, key, expected;
  };
  const std::vector<Case> cases = {
      {missing, pki_->Path("task.pem"), pki_->Path("task.key"),
       "cannot read TLS CA certificate file \"" + missing + "\""},
      {pki_->Path("ca.pem"), missing, pki_->Path("task.key"),
       "cannot read TLS certificate file \"" + missing + "\""},
      {pki_->Path("ca.pem"), pki_->Path("task.pem"), missing,
       "cannot read TLS private key file \"" + missing + "\""},
      {text, pki_->Path("task.pem"), pki_->Path("task.key"),
       "TLS CA certificate file \"" + text + "\" does not look like PEM"},
      {pki_->Path("ca.pem"), pki_->Path("task.key"), pki_->Path("task.key"),
       "TLS certificate file \"" + pki_->Path("task.key") + "\" does not look like PEM"},
      {pki_->Path("ca.pem"), pki_->Path("task.pem"), pki_->Path("task.pem"),
       "TLS private key file \"" + pki_->Path("task.pem") + "\" does not look like PEM"},
      {pki_->Path("ca.pem"), pki_->Path("task.pem"), pki_->Path(""),
       "cannot read TLS private key file \"" + pki_->Path("") + "\""},  // a directory
  };
  for (const Case& c : cases) {
    auto tls = LoadTlsFiles(c.ca, c.cert, c.key);
    EXPECT_TRUE(IsInvalidArgument(tls.status())) << tls.status();
    EXPECT_THAT(std::string(tls.status().message()), HasSubstr(c.expected));
  }

  std::ofstream(pki_->Path("encrypted.key"))
      << "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIB\n-----END ENCRYPTED PRIVATE KEY-----\n";
  auto encrypted =
      LoadTlsFiles(pki_->Path("ca.pem"), pki_->Path("task.pem"), pki_->Path("encrypted.key"));
  EXPECT_TRUE(IsInvalidArgument(encrypted.status())) << encrypted.status();
  EXPECT_THAT(std::string(encrypted.status().message()), HasSubstr("is encrypted"));
}

ProcessResult TwServer(std::vector<std::string> flags) {
  std::vector<std::string> args = {
      BuiltProgram("tools/tw"), "server", "--bind-host", "127.0.0.1", "--threads", "1"};
  args.insert(args.end(), flags.begin(), flags.end());
  // A local task: if the flags were (wrongly) accepted it would serve until the timeout.
  auto r = RunProcess(args, {{"TF_CONFIG", std::nullopt}}, absl::Seconds(20));
  EXPECT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r.ok() && r->timed_out) << "tw server kept running";
  return r.ok() ? *r : ProcessResult{};
}

TEST_F(TlsTest, TwServerNeedsAllThreeTlsFlags) {
  const std::string ca = "--tls-ca=" + pki_->Path("ca.pem");
  const std::string cert = "--tls-cert=" + pki_->Path("task.pem");
  const std::string key = "--tls-key=" + pki_->Path("task.key");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{cert, key}, "missing --tls-ca"},
      {{ca, key}, "missing --tls-cert"},
      {{ca, cert}, "missing --tls-key"},
      {{"--tls-server-name", kClusterName}, "--tls-server-name needs"},
      {{ca, cert, "--tls-key", pki_->Path("missing.key")},
       "cannot read TLS private key file \"" + pki_->Path("missing.key") + "\""},
  };
  for (const auto& [flags, message] : cases) {
    SCOPED_TRACE(message);
    ProcessResult r = TwServer(flags);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_THAT(r.err, HasSubstr("tw server: " + message));
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

// A `tw server` process started with the flags serves mutual TLS to an in-process task.
TEST_F(TlsTest, TwServerWithTlsFlagsJoinsAMutualTlsCluster) {
  const std::string ps_address = "127.0.0.1:" + std::to_string(testing::PickUnusedPort());
  const std::string worker_address = "localhost:" + std::to_string(testing::PickUnusedPort());
  const std::string tf_config = R"({"cluster":{"ps":[")" + ps_address + R"("],"worker":[")" +
                                worker_address + R"("]},"task":{"type":"ps","index":0}})";
  const std::string log = pki_->Path("ps.log");
  auto ps = ChildProcess::Start({BuiltProgram("tools/tw"), "server", "--bind-host", "127.0.0.1",
                                 "--threads", "1", "--tls-ca", pki_->Path("ca.pem"), "--tls-cert",
                                 pki_->Path("task.pem"), "--tls-key", pki_->Path("task.key")},
                                {{"TF_CONFIG", tf_config}}, log);
  ASSERT_TRUE(ps.ok()) << ps.status();
  ClusterSpec cluster;
  ASSERT_TRUE(cluster.AddJob("ps", std::vector<std::string>{ps_address}).ok());
  ASSERT_TRUE(cluster.AddJob("worker", std::vector<std::string>{worker_address}).ok());
  auto worker = Server::Create(cluster, "worker", 0,
                               {.bind_host = "127.0.0.1",
                                .num_threads = 1,
                                .wait_for_cluster = absl::Seconds(20),
                                .tls = pki_->Tls("ca", "task")});
  ASSERT_TRUE(worker.ok()) << worker.status();
  ASSERT_TRUE((*worker)->Start().ok());

  Scope root = Scope::NewRootScope();
  auto v = ops::MakeVariable(root.WithDevice("/job:ps/task:0"), "v", DT_FLOAT, {});
  auto init = ops::Assign(root.WithOpName("init"), v, 2.5f);
  auto read = ops::ReadVariable(root.WithOpName("read"), v);
  ClientSession session(root, {.target = (*worker)->target(), .tls = pki_->Tls("ca", "client")});
  // The first step waits (within wait_for_cluster) for the ps process to come up.
  auto first = session.Run({}, {}, {init.op()}, {.timeout = absl::Seconds(30)});
  ASSERT_TRUE(first.ok()) << first.status();
  auto out = session.Run({}, {read}, {}, {.timeout = absl::Seconds(30)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<float>(), 2.5f);

  // The ps process itself refuses a caller without TLS.
  grpc::Status raw = RawGetStatus(ps_address, grpc::InsecureChannelCredentials());
  EXPECT_EQ(raw.error_code(), grpc::StatusCode::UNAVAILABLE) << raw.error_message();

  (*ps)->Signal(SIGTERM);
  auto code = (*ps)->Wait(absl::Seconds(10));
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_EQ(*code, 128 + SIGTERM);  // stopped cleanly; retryable for TFJob's ExitCode policy
  std::ifstream in(log);
  const std::string ps_log(std::istreambuf_iterator<char>(in), {});
  EXPECT_THAT(ps_log, HasSubstr("mutual TLS"));
}

}  // namespace
}  // namespace tw
