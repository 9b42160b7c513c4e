// A task's metrics endpoint: Prometheus' text format at http://HOST:PORT/metrics, served by
// cpp-httplib on one thread of its own. The text comes from `render`, called per scrape.
#ifndef TENSORWEAVE_SRC_RPC_METRICS_ENDPOINT_H_
#define TENSORWEAVE_SRC_RPC_METRICS_ENDPOINT_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "tensorweave/status.h"

namespace httplib {
class Server;
}

namespace tw {

class MetricsEndpoint {
 public:
  // Listens on `host`:`port` (0: a free port). Unavailable naming the address when it
  // cannot be bound.
  static StatusOr<std::unique_ptr<MetricsEndpoint>> Start(const std::string& host, int port,
                                                          std::function<std::string()> render);
  // Stops serving; a scrape in progress finishes first.
  ~MetricsEndpoint();

  int port() const { return port_; }

 private:
  MetricsEndpoint() = default;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::atomic<bool> done_{false};  // the thread has left httplib's accept loop
  int port_ = 0;
};

}  // namespace tw

#endif  // TENSORWEAVE_SRC_RPC_METRICS_ENDPOINT_H_
