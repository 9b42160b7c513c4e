#include "testing/ports.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "absl/base/const_init.h"
#include "absl/synchronization/mutex.h"

namespace tw::testing {
namespace {

// A port the kernel gives for port 0 on loopback, released at once; -1 on failure.
int AskTheKernel() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

}  // namespace

int PickUnusedPort() {
  // A released port may come back from the kernel at the next ask: a cluster whose
  // addresses are picked before any server binds would then get one port twice.
  static absl::Mutex mu(absl::kConstInit);
  static auto* given = new std::set<int>();
  absl::MutexLock lock(&mu);
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int port = AskTheKernel();
    if (port < 0) return -1;
    if (given->insert(port).second) return port;
  }
  return -1;
}

namespace {

// The rows of /proc/net/tcp and tcp6: local port, remote port, state (hexadecimal "01" is
// ESTABLISHED, "0A" LISTEN) and socket inode.
struct TcpRow {
  int local_port, remote_port;
  std::string state, inode;
};
std::vector<TcpRow> TcpTable() {
  std::vector<TcpRow> rows;
  for (const char* path : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream table(path);
    std::string line;
    std::getline(table, line);  // the header
    while (std::getline(table, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
      fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
          timeout >> inode;
      const size_t l = local.rfind(':'), r = remote.rfind(':');
      if (l == std::string::npos || r == std::string::npos) continue;
      rows.push_back({std::stoi(local.substr(l + 1), nullptr, 16),
                      std::stoi(remote.substr(r + 1), nullptr, 16), state, inode});
    }
  }
  return rows;
}

}  // namespace

std::vector<int> ListeningPorts(int pid) {
  std::set<std::string> inodes;  // of the process's sockets, from "socket:[<inode>]" links
  std::error_code ec;
  for (const auto& fd :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    const std::string target = std::filesystem::read_symlink(fd.path(), ec).string();
    if (!ec && target.rfind("socket:[", 0) == 0) {
      inodes.insert(target.substr(8, target.size() - 9));
    }
  }
  std::set<int> ports;
  for (const TcpRow& row : TcpTable()) {
    if (row.state == "0A" && inodes.count(row.inode) > 0) ports.insert(row.local_port);
  }
  return {ports.begin(), ports.end()};
}

int ConnectionsTo(int port) {
  int count = 0;
  for (const TcpRow& row : TcpTable()) count += row.state == "01" && row.remote_port == port;
  return count;
}

int ConnectToLoopback(int port, int timeout_seconds) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    const int saved = errno;
    close(fd);
    errno = saved;
    return -1;
  }
  timeval tv{timeout_seconds, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  return fd;
}

bool HasIpv6Loopback() {
  const int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in6 addr{};
  addr.sin6_family = AF_INET6;
  addr.sin6_addr = in6addr_loopback;
  const bool bound = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return bound;
}

}  // namespace tw::testing
