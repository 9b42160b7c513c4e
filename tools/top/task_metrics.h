// What `tw top` shows of one task, read from its metrics endpoint's text (docs/metrics.md):
// the parser of Prometheus' text format for the series tensorweave serves, and the rates
// between two scrapes. Pure, so both are unit-tested on text.
#ifndef TENSORWEAVE_TOOLS_TOP_TASK_METRICS_H_
#define TENSORWEAVE_TOOLS_TOP_TASK_METRICS_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "tensorweave/status.h"

namespace tw::top {

// One sample line: `name{labels} value`.
struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

// The samples of `text` (comments skipped). InvalidArgument naming the line for a line
// that is not a sample.
StatusOr<std::vector<Sample>> ParseMetricsText(std::string_view text);

// The totals of one scrape of a task.
struct TaskTotals {
  std::string task;           // "ps:0", from the tw_job and tw_task labels
  double steps_ok = 0;        // tw_steps_total{code="OK"}
  double steps_failed = 0;    // the other codes
  double rpcs = 0;            // tw_rpc_server_handled_total, every method and code
  double rpc_errors = 0;      // ... with a code other than OK
  double bytes_in = 0;        // tw_rpc_server_received_bytes_total
  double bytes_out = 0;       // tw_rpc_server_sent_bytes_total
  double cpu_seconds = 0;     // process_cpu_seconds_total
  double resident_bytes = 0;  // process_resident_memory_bytes
  double sessions = 0;        // tw_sessions
  double variable_bytes = 0;  // sum of tw_variable_bytes
  double queued = 0;          // sum of tw_queue_size
};
TaskTotals Totals(const std::vector<Sample>& samples);

// Per second between two scrapes `seconds` apart (the later minus the earlier; counters
// that went down, a restarted task's, count from zero).
struct TaskRates {
  double steps = 0, failed_steps = 0, rpcs = 0, rpc_errors = 0, bytes_in = 0, bytes_out = 0;
  double cpu = 0;  // cores busy
};
TaskRates Rates(const TaskTotals& before, const TaskTotals& after, double seconds);

}  // namespace tw::top

#endif  // TENSORWEAVE_TOOLS_TOP_TASK_METRICS_H_
