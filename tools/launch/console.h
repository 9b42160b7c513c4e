// The terminal side of `tw launch`: task lines with a "[job:index] " prefix (coloured on a
// terminal), the launcher's own messages, and on a terminal a status line kept at the
// bottom with each task's state and the elapsed time.
#ifndef TENSORWEAVE_TOOLS_LAUNCH_CONSOLE_H_
#define TENSORWEAVE_TOOLS_LAUNCH_CONSOLE_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tw::launch {

// One task as the status line shows it: "worker:1" and "running", "exited 3", ...
struct TaskStatusView {
  std::string name;
  std::string state;
};

// "tw launch 12s | chief:0 running | worker:0 exited 0" when it fits in `width` columns;
// else the states counted ("tw launch 12s | 98 running | 2 restarting"); else that cut to
// `width` with "...". Pure, for the tests.
std::string FormatStatusLine(const std::vector<TaskStatusView>& tasks, long elapsed_seconds,
                             size_t width);

// The ANSI colour escape for the `ordinal`-th task ("\x1b[36m", ...), cycling a palette.
std::string_view TaskColor(size_t ordinal);

struct ConsoleOptions {
  int out_fd = 1;            // task stdout lines
  int err_fd = 2;            // task stderr lines, messages, the status line
  bool color_out = false;    // colour prefixes on out_fd
  bool color_err = false;    // colour prefixes on err_fd
  bool status_line = false;  // keep a status line on err_fd (a terminal)
};

// Writes with write(2), so lines reach the terminal or pipe whole and in order; a closed
// output (EPIPE) is then ignored. Task lines are gathered until Flush() (or another kind of
// output), so a burst of lines costs one write. Not thread-safe: the supervisor's loop
// owns it.
class Console {
 public:
  explicit Console(const ConsoleOptions& options) : options_(options) {}
  ~Console() { Flush(); }
  Console(const Console&) = delete;
  Console& operator=(const Console&) = delete;

  // "[name] line\n" on out_fd, or on err_fd when `is_stderr`. `color` is TaskColor(...).
  // Written by Flush() at the latest.
  void TaskLine(std::string_view name, std::string_view color, bool is_stderr,
                std::string_view line);
  // Writes the gathered task lines.
  void Flush();
  // "tw launch: text\n" on err_fd.
  void Message(std::string_view text);
  // Draws `tasks` as the status line (when enabled), replacing the previous one.
  void ShowStatus(const std::vector<TaskStatusView>& tasks, long elapsed_seconds);
  // Removes the status line, so that what follows starts on a clean line.
  void ClearStatus();

 private:
  void Write(int fd, std::string_view text);
  size_t TerminalWidth() const;

  ConsoleOptions options_;
  bool status_shown_ = false;
  std::string status_;  // the status line on screen when status_shown_
  int pending_fd_ = -1;
  std::string pending_;  // task lines not yet written to pending_fd_
  bool out_closed_ = false;
  bool err_closed_ = false;
};

}  // namespace tw::launch

#endif  // TENSORWEAVE_TOOLS_LAUNCH_CONSOLE_H_
