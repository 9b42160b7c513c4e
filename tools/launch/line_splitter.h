// Splits a byte stream that arrives in arbitrary pieces (pipe reads) into lines, keeping a
// partial line until its end arrives. Used by `tw launch` to prefix each line of a task.
#ifndef TENSORWEAVE_TOOLS_LAUNCH_LINE_SPLITTER_H_
#define TENSORWEAVE_TOOLS_LAUNCH_LINE_SPLITTER_H_

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace tw::launch {

// Not thread-safe; one per stream.
class LineSplitter {
 public:
  using Emit = std::function<void(std::string_view line)>;

  // A line longer than `max_line` bytes is emitted in pieces of `max_line` bytes, so a task
  // that never writes a newline cannot grow the launcher's memory without bound.
  explicit LineSplitter(size_t max_line = 64 * 1024) : max_line_(max_line == 0 ? 1 : max_line) {}

  // Appends `data`; calls `emit` for every line it completes, without its '\n'.
  void Feed(std::string_view data, const Emit& emit);
  // Emits the partial line left over (the stream ended without a final '\n'), if any.
  void Finish(const Emit& emit);
  bool has_partial() const { return !partial_.empty(); }

 private:
  size_t max_line_;
  std::string partial_;
};

}  // namespace tw::launch

#endif  // TENSORWEAVE_TOOLS_LAUNCH_LINE_SPLITTER_H_
