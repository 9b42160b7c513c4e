// `tw top`'s table: one row per task, from its scrapes (task_metrics.h). Pure text, so
// the layout is unit-tested; the command draws it in place on the terminal.
#ifndef TENSORWEAVE_TOOLS_TOP_TOP_VIEW_H_
#define TENSORWEAVE_TOOLS_TOP_TOP_VIEW_H_

#include <optional>
#include <string>
#include <vector>

#include "tools/top/task_metrics.h"

namespace tw::top {

struct TaskRow {
  std::string address;             // the metrics endpoint, "127.0.0.1:9100"
  std::string error;               // why the last scrape failed; empty when it worked
  TaskTotals totals;               // of the last scrape that worked
  std::optional<TaskRates> rates;  // since the scrape before it, once there are two
};

// The header line and one line per row, each at most `width` characters.
std::vector<std::string> RenderTable(const std::vector<TaskRow>& rows, double interval_seconds,
                                     int width);

}  // namespace tw::top

#endif  // TENSORWEAVE_TOOLS_TOP_TOP_VIEW_H_
