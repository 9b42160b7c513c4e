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
#include <system_error>

#include "src/cluster/host_port.h"
#include "src/rpc/chunk_socket.h"

namespace tw {
namespace {

// How often a connection that sent part of the magic is looked at again (polling it for
// input would return at once: its bytes were only peeked at).
constexpr std::chrono::milliseconds kPartialRecheck{20};

int PortOf(int fd) {
  sockaddr_storage bound{};
  socklen_t length = sizeof(bound);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) != 0) return 0;
  return bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                     : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
}

struct Address {
  sockaddr_storage addr{};
  socklen_t length = 0;
  int family() const { return addr.ss_family; }
  void set_port(int port) {
    if (family() == AF_INET6) {
      reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port = htons(static_cast<uint16_t>(port));
    } else {
      reinterpret_cast<sockaddr_in*>(&addr)->sin_port = htons(static_cast<uint16_t>(port));
    }
  }
  bool operator==(const Address& o) const {
    return length == o.length && std::memcmp(&addr, &o.addr, length) == 0;
  }
};

Address AnyAddress(int family) {
  Address a;
  if (family == AF_INET6) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&a.addr);
    in6->sin6_family = AF_INET6;
    in6->sin6_addr = in6addr_any;
    a.length = sizeof(sockaddr_in6);
  } else {
    auto* in = reinterpret_cast<sockaddr_in*>(&a.addr);
    in->sin_family = AF_INET;
    in->sin_addr.s_addr = htonl(INADDR_ANY);
    a.length = sizeof(sockaddr_in);
  }
  return a;
}

// The addresses `host` resolves to, each once (getaddrinfo repeats an address that
// /etc/hosts lists twice). Empty with `why` set when it does not resolve.
std::vector<Address> Resolve(const std::string& host, std::string* why) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(host.c_str(), "0", &hints, &found); rc != 0) {
    *why = gai_strerror(rc);
    return {};
  }
  std::vector<Address> addresses;
  for (addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    if (ai->ai_addrlen > sizeof(sockaddr_storage)) continue;
    Address a;
    std::memcpy(&a.addr, ai->ai_addr, ai->ai_addrlen);
    a.length = ai->ai_addrlen;
    if (std::find(addresses.begin(), addresses.end(), a) == addresses.end()) {
      addresses.push_back(a);
    }
  }
  freeaddrinfo(found);
  return addresses;
}

// A non-blocking listening socket on `a`, or -1 with errno set. SO_REUSEADDR (as gRPC sets
// it) lets a restarted task bind its port while old connections linger in TIME_WAIT; no
// SO_REUSEPORT, so a second server cannot bind a port in use and share its connections.
// `dual_stack`: an IPv6 wildcard that should take IPv4 connections too; `*is_dual` tells
// whether it does (a host may not allow it).
int ListenOn(const Address& a, bool dual_stack, bool* is_dual = nullptr) {
  const int fd = socket(a.family(), SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (a.family() == AF_INET6) {
    const int v6only = dual_stack ? 0 : 1;
    const bool set = setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof(v6only)) == 0;
    if (is_dual != nullptr) *is_dual = dual_stack && set;
  }
  if (bind(fd, reinterpret_cast<const sockaddr*>(&a.addr), a.length) != 0 ||
      listen(fd, SOMAXCONN) != 0) {
    const int saved = errno;
    close(fd);
    errno = saved;
    return -1;
  }
  return fd;
}

// One try at listening on every address at `port` (0: the first address's OS-chosen port
// for all). The sockets, or `*error` set (an errno).
std::vector<int> ListenOnAll(const std::vector<Address>& addresses, bool wildcard, int port,
                             int* chosen, int* error) {
  std::vector<int> fds;
  *chosen = port;
  *error = 0;
  int skipped = 0;
  for (Address a : addresses) {
    a.set_port(*chosen);
    bool dual = false;
    int fd = ListenOn(a, wildcard, &dual);
    if (fd < 0) {
      // A family this host lacks (IPv6 turned off; ::1 missing from a namespace's loopback)
      // is skipped; anything else (the port in use) fails the whole: a task must be
      // reachable at every address its name has.
      if (errno == EAFNOSUPPORT || (a.family() == AF_INET6 && errno == EADDRNOTAVAIL)) {
        skipped = errno;
        continue;
      }
      *error = errno;
      break;
    }
    if (*chosen == 0) *chosen = PortOf(fd);
    fds.push_back(fd);
    if (wildcard && a.family() == AF_INET6 && !dual) {
      // The IPv6 wildcard takes no IPv4 connections here: the IPv4 wildcard too.
      Address v4 = AnyAddress(AF_INET);
      v4.set_port(*chosen);
      if (int fd4 = ListenOn(v4, false); fd4 >= 0) {
        fds.push_back(fd4);
      } else {
        *error = errno;
        break;
      }
    }
  }
  if (*error == 0 && fds.empty()) *error = skipped != 0 ? skipped : EADDRNOTAVAIL;
  if (*error != 0) {
    for (int fd : fds) close(fd);
    fds.clear();
  }
  return fds;
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
  const bool wildcard = IsWildcardHost(host);
  std::vector<Address> addresses;
  if (!wildcard) {
    std::string why;
    addresses = Resolve(UnbracketedHost(host), &why);
    if (addresses.empty()) {
      return errors::Unavailable("Could not start gRPC server on ", address, ": cannot resolve \"",
                                 host, "\": ", why);
    }
  }
  std::vector<int> listeners;
  int chosen = 0, error = 0;
  // Port 0 on several addresses: the port the OS chose for the first may be taken on
  // another (an outgoing connection's local port, say); then other ports are tried.
  for (int attempt = 0; attempt < (port == 0 ? 8 : 1); ++attempt) {
    if (wildcard) {
      // One dual-stack IPv6 socket; the IPv4 wildcard alone where the host has no IPv6.
      listeners = ListenOnAll({AnyAddress(AF_INET6)}, true, port, &chosen, &error);
      if (error == EAFNOSUPPORT || error == EADDRNOTAVAIL) {
        listeners = ListenOnAll({AnyAddress(AF_INET)}, false, port, &chosen, &error);
      }
    } else {
      listeners = ListenOnAll(addresses, false, port, &chosen, &error);
    }
    if (error != EADDRINUSE) break;
  }
  const int wake = error == 0 ? eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK) : -1;
  if (error == 0 && wake < 0) error = errno;
  if (error != 0) {
    for (int fd : listeners) close(fd);
    return errors::Unavailable("Could not start gRPC server on ", address, ": ",
                               std::strerror(error));
  }
  return std::unique_ptr<TaskPort>(new TaskPort(std::move(listeners), chosen, wake, sort_timeout));
}

TaskPort::~TaskPort() {
  Stop();
  close(wake_);
}

Status TaskPort::Start(std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> grpc,
                       ChunkSocketServer* chunks) {
  absl::MutexLock lock(&mu_);
  if (stopped_) return errors::FailedPrecondition("the task's port is closed");
  if (loop_.joinable()) return OkStatus();
  grpc_ = std::move(grpc);
  chunks_ = chunks;
  try {
    loop_ = std::thread([this] { Loop(); });
  } catch (const std::system_error& e) {  // a pids limit, say
    return errors::ResourceExhausted("no thread to accept connections: ", e.what());
  }
  return OkStatus();
}

void TaskPort::Stop() {
  absl::MutexLock lock(&mu_);  // the loop never takes it
  if (stopped_) return;
  stopped_ = true;
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
    const Clock::time_point now = Clock::now();
    Clock::time_point wake_at = Clock::time_point::max();
    for (const Unsorted& c : unsorted_) {
      polled.push_back({c.fd, static_cast<short>(c.partial ? 0 : POLLIN), 0});
      wake_at = std::min(wake_at, c.partial ? now + kPartialRecheck : c.deadline);
    }
    int timeout_ms = -1;
    if (wake_at != Clock::time_point::max()) {
      timeout_ms = static_cast<int>(std::max<int64_t>(
          0, std::chrono::ceil<std::chrono::milliseconds>(wake_at - now).count()));
    }
    const int ready = poll(polled.data(), polled.size(), timeout_ms);
    wakeups_.fetch_add(1, std::memory_order_relaxed);
    if (ready < 0 && errno != EINTR) {
      usleep(10'000);  // out of memory for the poll set, say: wait rather than spin
      continue;
    }
    if (polled[0].revents != 0) return;  // Stop
    // Connections first (their entries follow the listeners'), then new ones.
    const size_t first = 1 + listeners_.size();
    const Clock::time_point checked = Clock::now();
    std::vector<Unsorted> still;
    for (size_t i = 0; i < unsorted_.size(); ++i) {
      Unsorted& c = unsorted_[i];
      const short revents = polled[first + i].revents;
      Sort to = Sort::kWait;
      const bool was_partial = c.partial;
      if (revents != 0 || c.partial) to = Peek(c, revents);
      if (c.partial && !was_partial) partial_.fetch_add(1, std::memory_order_relaxed);
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
    accepted_.fetch_add(1, std::memory_order_relaxed);
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    Unsorted c{fd, listener, PeerName(peer, length), Clock::now() + sort_timeout_};
    if (chunks_ == nullptr) {
      HandOver(c, Sort::kGrpc);  // nothing to sort: gRPC's, unread
      continue;
    }
    if (unsorted_.size() >= static_cast<size_t>(kMaxUnsorted)) {
      close(unsorted_.front().fd);  // the oldest, closest to its deadline anyway
      closed_.fetch_add(1, std::memory_order_relaxed);
      unsorted_.erase(unsorted_.begin());
    }
    unsorted_.push_back(std::move(c));
  }
}

TaskPort::Stats TaskPort::stats() const {
  return {.wakeups = wakeups_.load(std::memory_order_relaxed),
          .accepted = accepted_.load(std::memory_order_relaxed),
          .partial = partial_.load(std::memory_order_relaxed),
          .closed = closed_.load(std::memory_order_relaxed)};
}

TaskPort::Sort TaskPort::Peek(Unsorted& c, short revents) const {
  char first[sizeof(kChunkSocketMagic)];
  const ssize_t n = recv(c.fd, first, sizeof(first), MSG_PEEK);
  if (n < 0) {
    return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? Sort::kWait : Sort::kClose;
  }
  if (n == 0) return Sort::kClose;  // gone before saying anything
  if (std::memcmp(first, kChunkSocketMagic, static_cast<size_t>(n)) != 0) return Sort::kGrpc;
  if (static_cast<size_t>(n) == sizeof(first)) return Sort::kChunks;
  // Part of the magic from a peer that has gone (reset, or closed both ways): poll would
  // report it at once, again and again, with no more bytes to come.
  if ((revents & (POLLERR | POLLHUP)) != 0) return Sort::kClose;
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
    p.fd = c.fd;  // gRPC's from here
    grpc_->HandleNewConnection(&p);
    return;
  }
  close(c.fd);
  if (to == Sort::kClose) closed_.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace tw
