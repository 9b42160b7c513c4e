#include "testing/ports.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <set>

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

}  // namespace tw::testing
