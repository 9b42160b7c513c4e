#include "src/rpc/metrics_endpoint.h"

#include <sys/socket.h>

#include "httplib.h"
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
  // Brackets an IPv6 host's address the way the server's own listen address does not need.
  const std::string bind =
      host.size() > 2 && host.front() == '[' ? host.substr(1, host.size() - 2) : host;
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
  endpoint->thread_ = std::thread([&server] { server.listen_after_bind(); });
  return endpoint;
}

MetricsEndpoint::~MetricsEndpoint() {
  if (server_ != nullptr) server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace tw
