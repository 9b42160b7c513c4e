#include "src/rpc/chunk_socket.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "src/base/metrics.h"
#include "src/cluster/host_port.h"
#include "src/rpc/tensor_wire.h"

namespace tw {
namespace {

constexpr uint32_t kMagic = 0x31435754;  // "TWC1" in little-endian byte order
static_assert(kChunkSocketMagic[0] == (kMagic & 0xff) &&
              kChunkSocketMagic[1] == ((kMagic >> 8) & 0xff) &&
              kChunkSocketMagic[2] == ((kMagic >> 16) & 0xff) &&
              kChunkSocketMagic[3] == (kMagic >> 24));
constexpr uint32_t kPut = 1;
constexpr uint32_t kFetch = 2;
constexpr size_t kFrameBytes = 12;              // magic, op or code, size
constexpr uint32_t kMaxHeaderBytes = 64 << 10;  // a TensorChunk or an error message

void PutU32(char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
uint32_t GetU32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v |= static_cast<uint32_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}
// A request {magic, op, size} or a reply {magic, code, size}, then `body`.
std::string Frame(uint32_t op_or_code, std::string_view body) {
  std::string frame(kFrameBytes, '\0');
  PutU32(frame.data(), kMagic);
  PutU32(frame.data() + 4, op_or_code);
  PutU32(frame.data() + 8, static_cast<uint32_t>(body.size()));
  frame.append(body);
  return frame;
}

void SetTimeouts(int fd, int seconds) {
  timeval tv{};
  tv.tv_sec = seconds;
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}
void SetNoDelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}
// A peer that vanished (its host lost power, a NAT forgot the connection) is noticed after
// about 90 s of silence, and its connection closed.
void SetKeepAlive(int fd) {
  int on = 1, idle = 60, interval = 10, count = 3;
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof(interval));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof(count));
}

// Timeouts are DeadlineExceeded, not Unavailable: the peer may have read the request, so a
// client must not send the chunk again (ChunkSocketClient::Carry).
Status TooSlow(const std::string& peer) {
  return errors::DeadlineExceeded("a request on the chunk socket connection to ", peer,
                                  " took longer than ", ChunkSocketServer::kRequestTimeoutSeconds,
                                  " s");
}

// Reads exactly `n` bytes. `idle` (the wait for a request) retries when the receive timeout
// passes before the first byte, and reports a clean end of stream there as kEnd. Fails once
// `deadline` has passed, however the bytes trickle in.
enum class ReadEnd { kOk, kEnd };
StatusOr<ReadEnd> ReadFull(int fd, void* dst, size_t n, const std::string& peer, bool idle = false,
                           absl::Time deadline = absl::InfiniteFuture()) {
  char* p = static_cast<char*>(dst);
  size_t done = 0;
  while (done < n) {
    const ssize_t got = recv(fd, p + done, n - done, 0);
    if (got > 0) {
      done += static_cast<size_t>(got);
      if (done < n && absl::Now() > deadline) return TooSlow(peer);
      continue;
    }
    if (got == 0) {
      if (idle && done == 0) return ReadEnd::kEnd;
      return errors::Unavailable("the chunk socket connection to ", peer, " closed mid-message");
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (idle && done == 0) continue;
      return errors::DeadlineExceeded("the chunk socket connection to ", peer,
                                      " made no progress for ",
                                      ChunkSocketServer::kIdleTimeoutSeconds, " s");
    }
    return errors::Unavailable("reading from the chunk socket connection to ", peer, ": ",
                               std::strerror(errno));
  }
  return ReadEnd::kOk;
}

// Writes every byte of `iov` (which it advances), failing once `deadline` has passed.
Status WriteFull(int fd, iovec* iov, int count, const std::string& peer,
                 absl::Time deadline = absl::InfiniteFuture()) {
  while (count > 0) {
    if (absl::Now() > deadline) return TooSlow(peer);
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<size_t>(count);
    const ssize_t sent = sendmsg(fd, &msg, MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        return errors::DeadlineExceeded("the chunk socket connection to ", peer,
                                        " made no progress for ",
                                        ChunkSocketServer::kIdleTimeoutSeconds, " s");
      }
      return errors::Unavailable("writing to the chunk socket connection to ", peer, ": ",
                                 std::strerror(errno));
    }
    size_t left = static_cast<size_t>(sent);
    while (count > 0 && left >= iov->iov_len) {
      left -= iov->iov_len;
      ++iov;
      --count;
    }
    if (count > 0) {
      iov->iov_base = static_cast<char*>(iov->iov_base) + left;
      iov->iov_len -= left;
    }
  }
  return OkStatus();
}
Status WriteAll(int fd, const void* data, size_t n, const std::string& peer) {
  iovec iov{const_cast<void*>(data), n};
  return WriteFull(fd, &iov, 1, peer);
}

// Closes the sending side after an error reply and reads what the peer still sends for a
// moment: closing a socket with unread bytes would reset the connection, and the peer could
// lose the reply before reading it.
void EndAfterError(int fd) {
  shutdown(fd, SHUT_WR);
  SetTimeouts(fd, 1);
  char discard[64 << 10];
  size_t total = 0;
  ssize_t n;
  while (total < kChunkBytes && (n = recv(fd, discard, sizeof(discard), 0)) > 0) {
    total += static_cast<size_t>(n);
  }
}

Counter* ChunkBytesSent() {
  static Counter* counter = TensorBytesSent("tcp");
  return counter;
}

}  // namespace

// ----------------------------------------------------------------------------- server

ChunkSocketServer::~ChunkSocketServer() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    for (Connection& c : connections_) {
      if (c.fd >= 0) shutdown(c.fd, SHUT_RDWR);
    }
  }
  // Their sockets are shut down: the threads end promptly.
  std::list<Connection> all;
  {
    absl::MutexLock lock(&mu_);
    all.swap(connections_);  // a list's nodes stay where they are
  }
  for (Connection& c : all) c.thread.join();
}

void ChunkSocketServer::ReapFinished() {
  absl::MutexLock lock(&mu_);
  for (auto it = connections_.begin(); it != connections_.end();) {
    if (!it->finished) {
      ++it;
      continue;
    }
    it->thread.join();  // it has set `finished` as its last act
    it = connections_.erase(it);
  }
}

void ChunkSocketServer::Adopt(int fd, std::string peer) {
  ReapFinished();
  absl::MutexLock lock(&mu_);
  // Checked under the lock the destructor sets it under, so that no connection starts
  // after the destructor has shut the others down.
  if (stopping_ || !MakeRoomLocked()) {
    close(fd);  // the caller sends its chunk in a gRPC call instead
    return;
  }
  SetNoDelay(fd);
  SetKeepAlive(fd);
  SetTimeouts(fd, kIdleTimeoutSeconds);
  Connection& c = connections_.emplace_back();
  c.fd = fd;
  try {
    c.thread = std::thread([this, &c, peer = std::move(peer)] {
      Serve(&c, peer);
      // Closed under the lock, which the destructor holds while it shuts connections down.
      absl::MutexLock done(&mu_);
      close(c.fd);
      c.fd = -1;
      c.finished = true;
    });
  } catch (const std::system_error&) {  // no thread to be had (a pids limit)
    close(fd);
    connections_.pop_back();
  }
}

int ChunkSocketServer::OpenConnections() {
  absl::MutexLock lock(&mu_);
  int open = 0;
  for (const Connection& c : connections_) open += c.finished ? 0 : 1;
  return open;
}

bool ChunkSocketServer::MakeRoomLocked() {
  size_t open = 0;
  Connection* idle = nullptr;
  for (Connection& c : connections_) {
    if (c.finished || c.evicted) continue;
    ++open;
    if (!c.busy && idle == nullptr) idle = &c;
  }
  if (open < static_cast<size_t>(kMaxConnections)) return true;
  if (idle == nullptr) return false;
  // The oldest idle one: its client opens another when it needs one.
  idle->evicted = true;
  shutdown(idle->fd, SHUT_RDWR);
  return true;
}

void ChunkSocketServer::Serve(Connection* connection, const std::string& peer) {
  const int fd = connection->fd;
  std::string header;
  for (;;) {
    char frame[kFrameBytes];
    auto start = ReadFull(fd, frame, kFrameBytes, peer, /*idle=*/true);
    if (!start.ok() || *start == ReadEnd::kEnd) return;
    const absl::Time deadline = absl::Now() + absl::Seconds(kRequestTimeoutSeconds);
    {
      absl::MutexLock lock(&mu_);
      if (connection->evicted) return;
      connection->busy = true;
    }
    const uint32_t op = GetU32(frame + 4);
    const uint32_t size = GetU32(frame + 8);
    proto::TensorChunk chunk;
    Status s;
    if (GetU32(frame) != kMagic || (op != kPut && op != kFetch)) {
      s = errors::InvalidArgument("not a chunk socket request");
    } else if (size > kMaxHeaderBytes) {
      s = errors::InvalidArgument("chunk header of ", size, " bytes exceeds ", kMaxHeaderBytes);
    } else {
      header.resize(size);
      if (!ReadFull(fd, header.data(), size, peer, false, deadline).ok()) return;
      if (!chunk.ParseFromString(header)) {
        s = errors::InvalidArgument("chunk header does not parse as tw.proto.TensorChunk");
      }
    }
    Tensor fetched;
    if (s.ok() && op == kPut) {
      // The payload goes straight from the socket into the tensor.
      size_t consumed = 0;
      s = store_->Put(chunk, chunk.length(), [&](void* dst, size_t n) -> Status {
        consumed += n;
        return ReadFull(fd, dst, n, peer, false, deadline).status();
      });
      // A refused put's bytes are still on their way: read them before answering, so that
      // the caller, which writes all of them before it reads, sees the answer.
      if (!s.ok() && consumed == 0 && chunk.length() <= kChunkBytes) {
        std::string drain(chunk.length(), '\0');
        if (!ReadFull(fd, drain.data(), drain.size(), peer, false, deadline).ok()) return;
      }
    } else if (s.ok()) {
      auto served = store_->Serve(chunk);
      s = served.status();
      if (served.ok()) fetched = *std::move(served);
    }
    const std::string reply =
        Frame(static_cast<uint32_t>(s.code()), std::string(s.message().substr(0, 4096)));
    iovec iov[2] = {{const_cast<char*>(reply.data()), reply.size()}, {nullptr, 0}};
    int count = 1;
    if (s.ok() && op == kFetch) {
      iov[1] = {static_cast<char*>(fetched.raw_data()) + chunk.offset(), chunk.length()};
      count = 2;
      if (RecordingMetrics()) ChunkBytesSent()->Add(static_cast<double>(chunk.length()));
    }
    if (!WriteFull(fd, iov, count, peer, deadline).ok()) return;
    if (!s.ok()) return EndAfterError(fd);
    absl::MutexLock lock(&mu_);
    connection->busy = false;
  }
}

// ----------------------------------------------------------------------------- client

struct ChunkSocketClient::Job {
  bool put = false;
  proto::TensorChunk chunk;
  Tensor tensor;  // a put's source, kept alive until sent
  void* dst = nullptr;
  CancellationManager* cm = nullptr;
  CancellationManager::Token token = 0;
  Done done;
  // Shared with the cancellation callback, which may run at any time (also after Done).
  absl::Mutex mu;
  bool cancelled ABSL_GUARDED_BY(mu) = false;
  int fd ABSL_GUARDED_BY(mu) = -1;  // the connection carrying it, while it does
};

ChunkSocketClient::ChunkSocketClient(std::string host, int port, int connections)
    : host_(std::move(host)), port_(port), peer_(JoinHostPort(host_, port_)) {
  for (int i = 0; i < connections; ++i) {
    auto worker = std::make_unique<Worker>();
    Worker* w = worker.get();
    try {
      w->thread = std::thread([this, w] { Run(w); });
    } catch (const std::system_error&) {
      break;  // no thread to be had (a pids limit): fewer connections, or none (Usable())
    }
    workers_.push_back(std::move(worker));
  }
}

ChunkSocketClient::~ChunkSocketClient() { Close(); }

bool ChunkSocketClient::Usable() {
  absl::MutexLock lock(&mu_);
  return !closing_ && !workers_.empty() && absl::Now() >= retry_connect_at_;
}

void ChunkSocketClient::BeginClose(bool queued_unreachable) {
  std::deque<std::shared_ptr<Job>> queued;
  {
    absl::MutexLock lock(&mu_);
    closing_ = true;
    queued.swap(queue_);
    for (const auto& w : workers_) {
      if (w->fd >= 0) shutdown(w->fd, SHUT_RDWR);  // interrupts a chunk in progress
    }
  }
  for (const auto& job : queued) {
    if (job->cm != nullptr) job->cm->DeregisterCallback(job->token);
    job->done(errors::Cancelled("the connection to ", peer_, " is closing"), queued_unreachable);
  }
}

void ChunkSocketClient::Close() {
  BeginClose();
  for (const auto& w : workers_) {
    if (w->thread.joinable()) w->thread.join();
  }
}

void ChunkSocketClient::Put(proto::TensorChunk chunk, Tensor tensor, CancellationManager* cm,
                            Done done) {
  auto job = std::make_shared<Job>();
  job->put = true;
  job->chunk = std::move(chunk);
  job->tensor = std::move(tensor);
  job->cm = cm;
  job->done = std::move(done);
  Enqueue(std::move(job));
}

void ChunkSocketClient::Fetch(proto::TensorChunk chunk, void* dst, CancellationManager* cm,
                              Done done) {
  auto job = std::make_shared<Job>();
  job->chunk = std::move(chunk);
  job->dst = dst;
  job->cm = cm;
  job->done = std::move(done);
  Enqueue(std::move(job));
}

void ChunkSocketClient::Enqueue(std::shared_ptr<Job> job) {
  if (job->cm != nullptr) {
    job->token = job->cm->NewToken();
    const bool registered = job->cm->RegisterCallback(job->token, [job] {
      absl::MutexLock lock(&job->mu);
      job->cancelled = true;
      if (job->fd >= 0) shutdown(job->fd, SHUT_RDWR);  // ends its transfer now
    });
    if (!registered) {
      job->done(errors::Cancelled("the step was cancelled"), false);
      return;
    }
  }
  Status refused;
  {
    absl::MutexLock lock(&mu_);
    if (closing_) {
      refused = errors::Cancelled("the connection to ", peer_, " is closing");
    } else if (workers_.empty()) {
      refused = errors::Unavailable("no thread for the chunk socket at ", peer_);
    } else {
      queue_.push_back(std::move(job));
      return;
    }
  }
  if (job->cm != nullptr) job->cm->DeregisterCallback(job->token);
  job->done(refused, !IsCancelled(refused));
}

void ChunkSocketClient::Run(Worker* worker) {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(this, &ChunkSocketClient::HasWorkOrClosing));
      if (queue_.empty()) break;  // closing
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    bool unreachable = false;
    Status s = Carry(worker, job.get(), &unreachable);
    if (job->cm != nullptr) job->cm->DeregisterCallback(job->token);
    job->done(s, unreachable);
  }
  CloseConnection(worker);
}

void ChunkSocketClient::CloseConnection(Worker* worker) {
  absl::MutexLock lock(&mu_);
  if (worker->fd >= 0) close(worker->fd);
  worker->fd = -1;
}

StatusOr<int> ChunkSocketClient::Connect(Job* job) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(port_);
  if (int rc = getaddrinfo(host_.c_str(), port.c_str(), &hints, &found); rc != 0) {
    return errors::Unavailable("cannot resolve the chunk socket host ", host_, ": ",
                               gai_strerror(rc));
  }
  std::string why = "no address";
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) {
      why = std::strerror(errno);
      continue;
    }
    int err = connect(fd, a->ai_addr, a->ai_addrlen) == 0 ? 0 : errno;
    // In slices, so that closing the client or cancelling the step need not wait for it.
    const absl::Time deadline = absl::Now() + absl::Seconds(kConnectTimeoutSeconds);
    while (err == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      if (poll(&p, 1, 100) > 0) {
        socklen_t length = sizeof(err);
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &length);
        break;
      }
      bool give_up = absl::Now() >= deadline;
      {
        absl::MutexLock lock(&mu_);
        give_up |= closing_;
      }
      {
        absl::MutexLock lock(&job->mu);
        give_up |= job->cancelled;
      }
      if (give_up) err = ETIMEDOUT;
    }
    if (err != 0) {
      why = err == ETIMEDOUT ? absl::StrCat("no answer within ", kConnectTimeoutSeconds, " s")
                             : std::strerror(err);
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  if (fd < 0)
    return errors::Unavailable("cannot connect to the chunk socket at ", peer_, ": ", why);
  const int flags = fcntl(fd, F_GETFL);
  fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  SetNoDelay(fd);
  SetTimeouts(fd, ChunkSocketServer::kIdleTimeoutSeconds);
  return fd;
}

namespace {

// One request and its reply over `fd`. `replied`: some of the reply arrived (so the server
// read the request). Transport failures are Unavailable; the server's errors keep their
// code.
Status Exchange(int fd, bool put, const proto::TensorChunk& chunk, const Tensor& source, void* dst,
                const std::string& peer, bool* replied) {
  *replied = false;
  const std::string request = Frame(put ? kPut : kFetch, chunk.SerializeAsString());
  Status s;
  if (put) {
    iovec iov[2] = {{const_cast<char*>(request.data()), request.size()},
                    {static_cast<char*>(const_cast<void*>(source.raw_data())) + chunk.offset(),
                     chunk.length()}};
    s = WriteFull(fd, iov, 2, peer);
  } else {
    s = WriteAll(fd, request.data(), request.size(), peer);
  }
  // A refused put may have been answered before all of it was written: read the answer.
  char frame[kFrameBytes];
  Status read = ReadFull(fd, frame, kFrameBytes, peer).status();
  if (!read.ok()) return s.ok() ? read : s;
  *replied = true;
  const uint32_t code = GetU32(frame + 4);
  const uint32_t size = GetU32(frame + 8);
  if (GetU32(frame) != kMagic || size > kMaxHeaderBytes) {
    return errors::Unavailable("the chunk socket at ", peer, " answered with a bad frame");
  }
  std::string message(size, '\0');
  TW_RETURN_IF_ERROR(ReadFull(fd, message.data(), size, peer).status());
  if (code != 0) {
    return Status(code <= static_cast<uint32_t>(absl::StatusCode::kUnauthenticated)
                      ? static_cast<absl::StatusCode>(code)
                      : absl::StatusCode::kUnknown,
                  message);
  }
  TW_RETURN_IF_ERROR(s);
  if (put) {
    if (RecordingMetrics()) ChunkBytesSent()->Add(static_cast<double>(chunk.length()));
    return OkStatus();
  }
  return ReadFull(fd, dst, chunk.length(), peer).status();
}

}  // namespace

Status ChunkSocketClient::Carry(Worker* worker, Job* job, bool* unreachable) {
  for (int attempt = 0;; ++attempt) {
    const bool fresh = worker->fd < 0;
    if (fresh) {
      {
        absl::MutexLock lock(&mu_);
        if (!unreachable_.ok() && absl::Now() < retry_connect_at_) {
          *unreachable = true;  // no use waiting for another connect to time out
          return unreachable_;
        }
      }
      StatusOr<int> fd = Connect(job);
      absl::MutexLock lock(&mu_);
      if (!fd.ok()) {
        {
          absl::MutexLock cancelled(&job->mu);
          if (job->cancelled) return errors::Cancelled("the step was cancelled");
        }
        if (closing_) return errors::Cancelled("the connection to ", peer_, " is closing");
        unreachable_ = fd.status();
        retry_connect_at_ = absl::Now() + absl::Seconds(kRetryConnectSeconds);
        *unreachable = true;
        return unreachable_;
      }
      unreachable_ = OkStatus();
      worker->fd = *fd;
      if (closing_) shutdown(worker->fd, SHUT_RDWR);
    }
    const int fd = worker->fd;
    {
      absl::MutexLock lock(&job->mu);
      if (job->cancelled) return errors::Cancelled("the step was cancelled");
      job->fd = fd;
    }
    bool replied = false;
    Status s = Exchange(fd, job->put, job->chunk, job->tensor, job->dst, peer_, &replied);
    bool cancelled = false;
    {
      absl::MutexLock lock(&job->mu);
      job->fd = -1;
      cancelled = job->cancelled;
    }
    // After an error the stream's position is unknown (or the server closed it); after a
    // cancellation the socket may have been shut down even though the chunk went through.
    if (!s.ok() || cancelled) CloseConnection(worker);
    if (cancelled && !s.ok()) return errors::Cancelled("the step was cancelled");
    if (s.ok() || replied || !IsUnavailable(s)) return s;
    {
      absl::MutexLock lock(&mu_);
      if (closing_) return errors::Cancelled("the connection to ", peer_, " is closing");
    }
    if (fresh) {
      // A new connection closed unanswered (a proxy in between that passes only HTTP/2, a
      // server with all its connections busy): try another way, and for a while, as after a
      // failed connect.
      absl::MutexLock lock(&mu_);
      unreachable_ = s;
      retry_connect_at_ = absl::Now() + absl::Seconds(kRetryConnectSeconds);
      *unreachable = true;
      return s;
    }
    if (attempt > 0) return s;
    // A reused connection that the server had closed: once more on a new one.
  }
}

}  // namespace tw
