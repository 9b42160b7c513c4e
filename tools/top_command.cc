// `tw top`: a live view of a running cluster from its tasks' metrics endpoints
// (docs/metrics.md): each task's steps, RPCs and bytes per second, CPU and memory, redrawn
// in place every --interval until q or Ctrl-C.
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "httplib.h"
#include "tools/commands.h"
#include "tools/top/task_metrics.h"
#include "tools/top/top_view.h"

namespace tw::tools {
namespace {

using Clock = std::chrono::steady_clock;

std::atomic<bool> interrupted{false};
void OnInterrupt(int) { interrupted = true; }

// "http://127.0.0.1:9100/metrics", "127.0.0.1:9100/" or "127.0.0.1:9100" -> host and port.
StatusOr<std::pair<std::string, int>> ParseEndpoint(std::string text) {
  const std::string original = text;
  if (text.rfind("http://", 0) == 0) text = text.substr(7);
  if (const size_t slash = text.find('/'); slash != std::string::npos) text.resize(slash);
  const size_t colon = text.rfind(':');
  int port = 0;
  if (colon == std::string::npos || colon == 0 ||
      !absl::SimpleAtoi(text.substr(colon + 1), &port) || port <= 0 || port > 65535) {
    return errors::InvalidArgument("\"", original,
                                   "\" is not a metrics address (HOST:PORT, as tw launch "
                                   "prints them)");
  }
  std::string host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  return std::make_pair(host, port);
}

// One scrape of every task into `rows`, with rates since the previous one.
struct Endpoint {
  std::string host;
  int port;
  std::optional<top::TaskTotals> last;
  Clock::time_point last_time;
};
void ScrapeAll(std::vector<Endpoint>& endpoints, std::vector<top::TaskRow>& rows) {
  for (size_t i = 0; i < endpoints.size(); ++i) {
    Endpoint& e = endpoints[i];
    top::TaskRow& row = rows[i];
    httplib::Client client(e.host, e.port);
    client.set_connection_timeout(1, 0);
    client.set_read_timeout(2, 0);
    auto res = client.Get("/metrics");
    if (!res || res->status != 200) {
      row.error = res ? "HTTP " + std::to_string(res->status) : httplib::to_string(res.error());
      row.rates.reset();
      e.last.reset();
      continue;
    }
    auto samples = top::ParseMetricsText(res->body);
    if (!samples.ok()) {
      row.error = std::string(samples.status().message());
      continue;
    }
    const Clock::time_point now = Clock::now();
    top::TaskTotals totals = top::Totals(*samples);
    row.error.clear();
    if (e.last) {
      row.rates =
          top::Rates(*e.last, totals, std::chrono::duration<double>(now - e.last_time).count());
    }
    row.totals = totals;
    e.last = totals;
    e.last_time = now;
  }
}

int TerminalWidth() {
  winsize w{};
  return ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 0 ? w.ws_col : 0;
}

// Keys without Enter and without echo while the view runs; restored on every way out.
class RawKeys {
 public:
  RawKeys() {
    if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &saved_) != 0) return;
    termios raw = saved_;
    raw.c_lflag &= ~(ICANON | ECHO);
    raw.c_cc[VMIN] = 0;
    raw.c_cc[VTIME] = 0;
    active_ = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
  }
  ~RawKeys() {
    if (active_) tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
  }
  // Waits up to `timeout` (less when a signal comes) for a key; true when it is q. Once
  // stdin is at its end (/dev/null) it only waits.
  bool QuitPressed(std::chrono::milliseconds timeout) {
    const int ms = static_cast<int>(std::max<long>(0, timeout.count()));
    if (stdin_ended_) {
      poll(nullptr, 0, ms);
      return false;
    }
    pollfd p{.fd = STDIN_FILENO, .events = POLLIN, .revents = 0};
    if (poll(&p, 1, ms) <= 0) return false;
    char c = 0;
    if (read(STDIN_FILENO, &c, 1) <= 0) {
      stdin_ended_ = true;
      return false;
    }
    return c == 'q' || c == 'Q';
  }

 private:
  termios saved_{};
  bool active_ = false;
  bool stdin_ended_ = false;
};

int RunTop(const std::vector<std::string>& addresses, double interval, bool once) {
  std::vector<Endpoint> endpoints;
  for (const std::string& a : addresses) {
    auto parsed = ParseEndpoint(a);
    if (!parsed.ok()) {
      std::cerr << "tw top: " << parsed.status().message() << "\n";
      return 1;
    }
    endpoints.push_back({parsed->first, parsed->second, std::nullopt, {}});
  }
  std::vector<top::TaskRow> rows(endpoints.size());
  for (size_t i = 0; i < endpoints.size(); ++i) {
    rows[i].address = endpoints[i].host + ":" + std::to_string(endpoints[i].port);
  }
  const auto period = std::chrono::milliseconds(static_cast<long>(interval * 1000));
  if (once) {  // two scrapes, for the rates, then one table on stdout
    ScrapeAll(endpoints, rows);
    std::this_thread::sleep_for(period);
    ScrapeAll(endpoints, rows);
    for (const std::string& line : top::RenderTable(rows, interval, 0)) std::cout << line << "\n";
    for (const top::TaskRow& r : rows) {
      if (!r.error.empty()) return 1;
    }
    return 0;
  }

  struct sigaction on_interrupt = {};
  on_interrupt.sa_handler = OnInterrupt;  // no SA_RESTART: poll returns at once
  sigaction(SIGINT, &on_interrupt, nullptr);
  sigaction(SIGTERM, &on_interrupt, nullptr);
  RawKeys keys;
  std::cout << "\x1b[?1049h\x1b[?25l" << std::flush;  // the alternate screen, no cursor
  while (!interrupted) {
    ScrapeAll(endpoints, rows);
    std::string frame = "\x1b[H";
    for (const std::string& line : top::RenderTable(rows, interval, TerminalWidth())) {
      frame += line + "\x1b[K\n";
    }
    frame += "\x1b[J";
    std::cout << frame << std::flush;
    const Clock::time_point until = Clock::now() + period;
    bool quit = false;
    while (!quit && !interrupted && Clock::now() < until) {
      quit = keys.QuitPressed(
          std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()));
    }
    if (quit) break;
  }
  std::cout << "\x1b[?25h\x1b[?1049l" << std::flush;  // back to the normal screen
  return 0;
}

}  // namespace

void AddTopCommand(CLI::App& app, int* exit_code) {
  auto addresses = std::make_shared<std::vector<std::string>>();
  auto interval = std::make_shared<double>(1.0);
  auto once = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand(
      "top", "Watch a running cluster: each task's steps, RPCs, bytes, CPU and memory, live");
  cmd->add_option("address", *addresses,
                  "The tasks' metrics endpoints, HOST:PORT (tw launch prints them)")
      ->required();
  cmd->add_option("--interval", *interval, "Seconds between refreshes")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  cmd->add_flag("--once", *once,
                "Print one table (two scrapes --interval apart, for the rates) and exit: 1 when "
                "a task does not answer");
  cmd->footer(
      "Example:\n  tw launch --cluster ps=1,worker=2 -- mnist_ps   # prints the addresses\n"
      "  tw top 127.0.0.1:41001 127.0.0.1:41002 127.0.0.1:41003\n"
      "Keys: q quits (so does Ctrl-C). Columns per second since the last refresh.");
  cmd->callback([=] { *exit_code = RunTop(*addresses, *interval, *once); });
}

}  // namespace tw::tools
