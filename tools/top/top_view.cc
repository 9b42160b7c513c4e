#include "tools/top/top_view.h"

#include "absl/strings/str_format.h"

namespace tw::top {

std::vector<std::string> RenderTable(const std::vector<TaskRow>& rows, double interval_seconds,
                                     int width) {
  std::vector<std::string> lines;
  int up = 0;
  for (const TaskRow& r : rows) up += r.error.empty() ? 1 : 0;
  lines.push_back(
      absl::StrFormat("tw top: %d of %d tasks answering, every %.1f s; q or Ctrl-C quits", up,
                      static_cast<int>(rows.size()), interval_seconds));
  lines.push_back(absl::StrFormat("%-12s %-21s %9s %8s %8s %8s %8s %5s %7s %4s %8s %6s", "TASK",
                                  "METRICS", "STEPS/S", "FAILED/S", "RPC/S", "IN MB/S", "OUT MB/S",
                                  "CPU", "RSS MB", "SESS", "VARS MB", "QUEUED"));
  for (const TaskRow& r : rows) {
    const std::string task = r.totals.task.empty() ? "?" : r.totals.task;
    if (!r.error.empty()) {
      lines.push_back(absl::StrFormat("%-12s %-21s down: %s", task, r.address, r.error));
    } else if (!r.rates) {
      lines.push_back(absl::StrFormat("%-12s %-21s %9s %8s %8s %8s %8s %5s %7.1f %4.0f %8.1f %6.0f",
                                      task, r.address, "-", "-", "-", "-", "-", "-",
                                      r.totals.resident_bytes / 1e6, r.totals.sessions,
                                      r.totals.variable_bytes / 1e6, r.totals.queued));
    } else {
      const TaskRates& x = *r.rates;
      lines.push_back(
          absl::StrFormat("%-12s %-21s %9.1f %8.1f %8.1f %8.2f %8.2f %5.2f %7.1f %4.0f %8.1f %6.0f",
                          task, r.address, x.steps, x.failed_steps, x.rpcs, x.bytes_in / 1e6,
                          x.bytes_out / 1e6, x.cpu, r.totals.resident_bytes / 1e6,
                          r.totals.sessions, r.totals.variable_bytes / 1e6, r.totals.queued));
    }
  }
  if (width > 0) {
    for (std::string& line : lines) {
      if (static_cast<int>(line.size()) > width) line.resize(width);
    }
  }
  return lines;
}

}  // namespace tw::top
