#include "src/rpc/metrics_endpoint.h"

#include <sys/socket.h>

#include <chrono>
#include <thread>

#include "absl/time/clock.h"
#include "httplib.h"
#include "src/cluster/host_port.h"
#include "tensorweave/status.h"

namespace tw {

StatusOr<std::unique_ptr<MetricsEndpoint>> MetricsEndpoint::Start(
    const std::string& host, int port, std::function<std::string()> render) {
  std::unique_ptr<MetricsEndpoint> endpoint(new MetricsEndpoint());
  endpoint->server_ = std::make_unique<httplib::Server>();
  httplib::Server& server = *endpoint->server_;
  // One scrape at a time is plenty; httplib's default is a pool of 8 or more threads.
  server.new_task_queue = [] { return new httplib::ThreadPool(1); };
  // httplib sets SO_REUSEPORT by default, with which a second endpoint could bind a port in
  // use and share its scrapes (as a stale task and its replacement would). SO_REUSEADDR
  // alone lets a restarted task bind again despite connections in TIME_WAIT.
  server.set_socket_options([](int sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  server.Get("/metrics", [render](const httplib::Request&, httplib::Response& res) {
    res.set_content(render(), "text/plain; version=0.0.4; charset=utf-8");
  });
  server.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("tensorweave task: metrics at /metrics\n", "text/plain");
  });
  // httplib takes an IPv6 host without the brackets a listen address has.
  const std::string bind = UnbracketedHost(host);
  if (port == 0) {
    endpoint->port_ = server.bind_to_any_port(bind);
  } else if (server.bind_to_port(bind, port)) {
    endpoint->port_ = port;
  } else {
    endpoint->port_ = -1;
  }
  if (endpoint->port_ <= 0) {
    return errors::Unavailable("cannot serve metrics on ", host, ":", port,
                               " (is the port in use?)");
  }
  // Bound and listening already: scrapes queue until the thread accepts them.
  endpoint->thread_ = std::thread([&server, done = &endpoint->done_] {
    server.listen_after_bind();
    done->store(true);
  });
  // Serving when Start returns (the destructor copes either way).
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (!server.is_running() && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(1));
  if (!server.is_running()) {
    // The thread ended at once (an accept error), or never got a core: both are fatal here.
    return errors::Unavailable("the metrics endpoint on ", host, ":", endpoint->port_,
                               " did not start serving");
  }
  return endpoint;
}

MetricsEndpoint::~MetricsEndpoint() {
  // httplib's stop() does nothing until the thread is in its accept loop (is_running()), and
  // must be called once only: an endpoint stopped right after it started would otherwise
  // leave the thread serving for ever, and this destructor waiting for it.
  if (thread_.joinable()) {
    while (!done_.load() && !server_->is_running()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (!done_.load()) server_->stop();
    thread_.join();
  }
}

}  // namespace tw
