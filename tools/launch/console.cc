#include "tools/launch/console.h"

#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>

namespace tw::launch {
namespace {

constexpr std::string_view kReset = "\x1b[0m";
constexpr std::string_view kEraseLine = "\r\x1b[K";
// Task lines are gathered and written together, up to this many bytes at a time.
constexpr size_t kMaxPending = 64 * 1024;
// Cyan, yellow, green, magenta, blue and their bright forms; red is left for errors.
constexpr std::string_view kPalette[] = {"\x1b[36m", "\x1b[33m", "\x1b[32m", "\x1b[35m",
                                         "\x1b[34m", "\x1b[96m", "\x1b[93m", "\x1b[92m",
                                         "\x1b[95m", "\x1b[94m"};

}  // namespace

std::string FormatStatusLine(const std::vector<TaskStatusView>& tasks, long elapsed_seconds,
                             size_t width) {
  const std::string head = "tw launch " + std::to_string(elapsed_seconds) + "s";
  std::string line = head;
  for (const TaskStatusView& t : tasks) line += " | " + t.name + " " + t.state;
  if (line.size() <= width) return line;
  // Too many tasks for one line: count them by state, in order of first appearance.
  std::vector<std::pair<std::string, int>> counts;
  for (const TaskStatusView& t : tasks) {
    auto it = counts.begin();
    while (it != counts.end() && it->first != t.state) ++it;
    if (it == counts.end()) {
      counts.emplace_back(t.state, 1);
    } else {
      ++it->second;
    }
  }
  line = head;
  for (const auto& [state, n] : counts) line += " | " + std::to_string(n) + " " + state;
  if (line.size() <= width) return line;
  if (width <= 3) return line.substr(0, width);
  return line.substr(0, width - 3) + "...";
}

std::string_view TaskColor(size_t ordinal) {
  return kPalette[ordinal % (sizeof(kPalette) / sizeof(kPalette[0]))];
}

void Console::TaskLine(std::string_view name, std::string_view color, bool is_stderr,
                       std::string_view line) {
  const bool colored = is_stderr ? options_.color_err : options_.color_out;
  const int fd = is_stderr ? options_.err_fd : options_.out_fd;
  ClearStatus();
  if (fd != pending_fd_) Flush();
  pending_fd_ = fd;
  if (colored) pending_ += color;
  pending_ += "[";
  pending_ += name;
  pending_ += "]";
  if (colored) pending_ += kReset;
  pending_ += " ";
  pending_ += line;
  pending_ += "\n";
  if (pending_.size() >= kMaxPending) Flush();
}

void Console::Flush() {
  if (pending_.empty()) return;
  Write(pending_fd_, pending_);
  pending_.clear();
}

void Console::Message(std::string_view text) {
  ClearStatus();
  Flush();
  std::string line = "tw launch: ";
  line += text;
  line += "\n";
  Write(options_.err_fd, line);
}

void Console::ShowStatus(const std::vector<TaskStatusView>& tasks, long elapsed_seconds) {
  if (!options_.status_line) return;
  // One column short of the width, so the cursor never wraps to a new line.
  const size_t width = TerminalWidth();
  std::string line = FormatStatusLine(tasks, elapsed_seconds, width > 1 ? width - 1 : 1);
  if (status_shown_ && line == status_) return;  // unchanged: spare the terminal
  Flush();
  Write(options_.err_fd, std::string(kEraseLine) + line);
  status_ = std::move(line);
  status_shown_ = true;
}

void Console::ClearStatus() {
  if (!status_shown_) return;
  status_shown_ = false;
  Write(options_.err_fd, kEraseLine);
}

void Console::Write(int fd, std::string_view text) {
  bool& closed = fd == options_.err_fd ? err_closed_ : out_closed_;
  while (!text.empty() && !closed) {
    const ssize_t n = write(fd, text.data(), text.size());
    if (n > 0) {
      text.remove_prefix(static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && errno == EAGAIN) {
      // An inherited non-blocking descriptor: wait until it drains rather than drop output.
      pollfd p{fd, POLLOUT, 0};
      poll(&p, 1, 1000);
    } else {
      closed = true;  // EPIPE or a closed descriptor: the reader is gone
    }
  }
}

size_t Console::TerminalWidth() const {
  winsize ws{};
  if (ioctl(options_.err_fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 80;
}

}  // namespace tw::launch
