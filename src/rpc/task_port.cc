#include "src/rpc/task_port.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/time/clock.h"
#include "src/cluster/host_port.h"
#include "src/rpc/chunk_socket.h"

namespace tw {
namespace {

// How often a connection that sent part of the magic is looked at again (polling it for
// input would return at once: its bytes were only peeked at).
constexpr absl::Duration kPartialRecheck = absl::Milliseconds(20);

bool IsWildcard(const std::string& host) {
  return host.empty() || host == "0.0.0.0" || host == "::" || host == "[::]";
}

std::string Unbracketed(const std::string& host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    return host.substr(1, host.size() - 2);
  }
  return host;
}

int PortOf(int fd) {
  sockaddr_storage bound{};
  socklen_t length = sizeof(bound);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) != 0) return 0;
  return bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                     : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
}

void SetPort(sockaddr* addr, int port) {
  if (addr->sa_family == AF_INET6) {
    reinterpret_cast<sockaddr_in6*>(addr)->sin6_port = htons(static_cast<uint16_t>(port));
  } else {
    reinterpret_cast<sockaddr_in*>(addr)->sin_port = htons(static_cast<uint16_t>(port));
  }
}

// A non-blocking listening socket on `addr`, or -1 with errno set. SO_REUSEADDR (as gRPC
// sets it) lets a restarted task bind its port while old connections linger in TIME_WAIT;
// no SO_REUSEPORT, so a second server cannot bind a port in use and share its connections.
// `dual_stack`: an IPv6 wildcard that takes IPv4 connections too.
int ListenOn(const addrinfo& a, bool dual_stack) {
  const int fd = socket(a.ai_family, a.ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a.ai_protocol);
  if (fd < 0) return -1;
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (a.ai_family == AF_INET6) {
    const int v6only = dual_stack ? 0 : 1;
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof(v6only));
  }
  if (bind(fd, a.ai_addr, a.ai_addrlen) != 0 || listen(fd, SOMAXCONN) != 0) {
    const int saved = errno;
    close(fd);
    errno = saved;
    return -1;
  }
  return fd;
}

std::string PeerName(const sockaddr_storage& addr, socklen_t length) {
  char host[NI_MAXHOST] = "?";
  char port[NI_MAXSERV] = "?";
  getnameinfo(reinterpret_cast<const sockaddr*>(&addr), length, host, sizeof(host), port,
              sizeof(port), NI_NUMERICHOST | NI_NUMERICSERV);
  return JoinHostPort(host, std::atoi(port));
}

}  // namespace

StatusOr<std::unique_ptr<TaskPort>> TaskPort::Listen(const std::string& host, int port,
                                                     absl::Duration sort_timeout) {
  const std::string address = JoinHostPort(host, port);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  const bool wildcard = IsWildcard(host);
  // A wildcard is one dual-stack IPv6 socket, or IPv4 alone where the host has no IPv6.
  hints.ai_family = wildcard ? AF_INET6 : AF_UNSPEC;
  const std::string name = wildcard ? "" : Unbracketed(host);
  addrinfo* found = nullptr;
  int rc = getaddrinfo(name.empty() ? nullptr : name.c_str(), "0", &hints, &found);
  if (rc != 0 && wildcard) {
    hints.ai_family = AF_INET;
    rc = getaddrinfo(nullptr, "0", &hints, &found);
  }
  if (rc != 0) {
    return errors::Unavailable("Could not start gRPC server on ", address, ": cannot resolve \"",
                               host, "\": ", gai_strerror(rc));
  }
  std::vector<int> listeners;
  int chosen = port;
  std::string why;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    SetPort(a->ai_addr, chosen);
    int fd = ListenOn(*a, wildcard);
    if (fd < 0 && wildcard && a->ai_family == AF_INET6 &&
        (errno == EAFNOSUPPORT || errno == EADDRNOTAVAIL)) {
      // No IPv6 here: the IPv4 wildcard instead.
      addrinfo v4 = *a;
      sockaddr_in any{};
      any.sin_family = AF_INET;
      any.sin_port = htons(static_cast<uint16_t>(chosen));
      v4.ai_family = AF_INET;
      v4.ai_addr = reinterpret_cast<sockaddr*>(&any);
      v4.ai_addrlen = sizeof(any);
      fd = ListenOn(v4, false);
    }
    if (fd < 0) {
      // An address family this host lacks (::1 without IPv6) is skipped; anything else (the
      // port in use on one of the addresses) fails the whole, as a task must be reachable at
      // every address its name has.
      if (errno == EAFNOSUPPORT || errno == EADDRNOTAVAIL) continue;
      why = std::strerror(errno);
      break;
    }
    if (chosen == 0) chosen = PortOf(fd);  // the other addresses take the same port
    listeners.push_back(fd);
  }
  freeaddrinfo(found);
  if (listeners.empty() && why.empty()) why = "no address to listen on";
  const int wake = why.empty() ? eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK) : -1;
  if (why.empty() && wake < 0) why = std::strerror(errno);
  if (!why.empty()) {
    for (int fd : listeners) close(fd);
    return errors::Unavailable("Could not start gRPC server on ", address, ": ", why);
  }
  return std::unique_ptr<TaskPort>(new TaskPort(std::move(listeners), chosen, wake, sort_timeout));
}

TaskPort::~TaskPort() {
  Stop();
  close(wake_);
}

void TaskPort::Start(std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> grpc,
                     ChunkSocketServer* chunks) {
  absl::MutexLock lock(&stop_mu_);
  if (stopped_ || loop_.joinable()) return;
  grpc_ = std::move(grpc);
  chunks_ = chunks;
  loop_ = std::thread([this] { Loop(); });
}

void TaskPort::Stop() {
  {
    absl::MutexLock lock(&stop_mu_);
    if (stopped_) return;
    stopped_ = true;
  }
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(wake_, &one, sizeof(one));
  if (loop_.joinable()) loop_.join();
  for (int fd : listeners_) close(fd);
  for (Unsorted& c : unsorted_) close(c.fd);
  unsorted_.clear();
}

void TaskPort::Loop() {
  std::vector<pollfd> polled;
  for (;;) {
    polled.clear();
    polled.push_back({wake_, POLLIN, 0});
    for (int fd : listeners_) polled.push_back({fd, POLLIN, 0});
    absl::Time wake_at = absl::InfiniteFuture();
    const absl::Time now = absl::Now();
    for (const Unsorted& c : unsorted_) {
      polled.push_back({c.fd, static_cast<short>(c.partial ? 0 : POLLIN), 0});
      wake_at = std::min(wake_at, c.partial ? now + kPartialRecheck : c.deadline);
    }
    const int timeout_ms =
        wake_at == absl::InfiniteFuture()
            ? -1
            : static_cast<int>(std::max<int64_t>(
                  0, absl::ToInt64Milliseconds(absl::Ceil(wake_at - now, absl::Milliseconds(1)))));
    if (poll(polled.data(), polled.size(), timeout_ms) < 0 && errno != EINTR) {
      usleep(10'000);  // out of memory for the poll set, say: wait rather than spin
      continue;
    }
    if (polled[0].revents != 0) return;  // Stop
    // Connections first (their entries follow the listeners'), then new ones.
    const size_t first = 1 + listeners_.size();
    const absl::Time checked = absl::Now();
    std::vector<Unsorted> still;
    for (size_t i = 0; i < unsorted_.size(); ++i) {
      Unsorted& c = unsorted_[i];
      Sort to = Sort::kWait;
      if (polled[first + i].revents != 0 || c.partial) to = Peek(c);
      if (to == Sort::kWait && checked >= c.deadline) to = Sort::kClose;
      if (to == Sort::kWait) {
        still.push_back(std::move(c));
      } else {
        HandOver(c, to);
      }
    }
    unsorted_.swap(still);
    for (size_t i = 0; i < listeners_.size(); ++i) {
      if (polled[1 + i].revents != 0) AcceptAll(listeners_[i]);
    }
  }
}

void TaskPort::AcceptAll(int listener) {
  for (;;) {
    sockaddr_storage peer{};
    socklen_t length = sizeof(peer);
    const int fd = accept4(listener, reinterpret_cast<sockaddr*>(&peer), &length,
                           SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      // EAGAIN: none left. Out of descriptors (EMFILE), say: the next poll tries again, a
      // moment later rather than in a spin.
      if (errno != EAGAIN && errno != EWOULDBLOCK) usleep(10'000);
      return;
    }
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    Unsorted c{fd, listener, PeerName(peer, length), absl::Now() + sort_timeout_};
    if (chunks_ == nullptr) {
      HandOver(c, Sort::kGrpc);  // nothing to sort: gRPC's, unread
      continue;
    }
    if (unsorted_.size() >= static_cast<size_t>(kMaxUnsorted)) {
      close(unsorted_.front().fd);  // the oldest, closest to its deadline anyway
      unsorted_.erase(unsorted_.begin());
    }
    unsorted_.push_back(std::move(c));
  }
}

TaskPort::Sort TaskPort::Peek(Unsorted& c) const {
  char first[sizeof(kChunkSocketMagic)];
  const ssize_t n = recv(c.fd, first, sizeof(first), MSG_PEEK);
  if (n < 0) {
    return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? Sort::kWait : Sort::kClose;
  }
  if (n == 0) return Sort::kClose;  // gone before saying anything
  if (std::memcmp(first, kChunkSocketMagic, static_cast<size_t>(n)) != 0) return Sort::kGrpc;
  if (static_cast<size_t>(n) == sizeof(first)) return Sort::kChunks;
  c.partial = true;
  return Sort::kWait;
}

void TaskPort::HandOver(Unsorted& c, Sort to) {
  if (to == Sort::kChunks && chunks_ != nullptr) {
    // The chunk socket reads with blocking calls and receive timeouts.
    fcntl(c.fd, F_SETFL, fcntl(c.fd, F_GETFL) & ~O_NONBLOCK);
    chunks_->Adopt(c.fd, std::move(c.peer));
    return;
  }
  if (to == Sort::kGrpc && grpc_ != nullptr) {
    grpc::experimental::ExternalConnectionAcceptor::NewConnectionParameters p;
    p.listener_fd = c.listener;
    p.fd = c.fd;  // gRPC's from here (it closes it when it cannot take it)
    grpc_->HandleNewConnection(&p);
    return;
  }
  close(c.fd);
}

}  // namespace tw
