#include "tools/top/task_metrics.h"

#include <cctype>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tw::top {
namespace {

// Parses `{a="x",b="y\"z"}` at text[*pos] (just after the name) into `labels`.
bool ParseLabels(std::string_view text, size_t* pos, std::map<std::string, std::string>* labels) {
  if (*pos >= text.size() || text[*pos] != '{') return true;  // no labels
  ++*pos;
  while (*pos < text.size() && text[*pos] != '}') {
    const size_t eq = text.find('=', *pos);
    if (eq == std::string_view::npos || eq + 1 >= text.size() || text[eq + 1] != '"') return false;
    std::string name(text.substr(*pos, eq - *pos));
    std::string value;
    size_t i = eq + 2;
    for (; i < text.size() && text[i] != '"'; ++i) {
      if (text[i] == '\\' && i + 1 < text.size()) {
        ++i;
        value += text[i] == 'n' ? '\n' : text[i];
      } else {
        value += text[i];
      }
    }
    if (i >= text.size()) return false;
    (*labels)[name] = value;
    *pos = i + 1;
    if (*pos < text.size() && text[*pos] == ',') ++*pos;
  }
  if (*pos >= text.size()) return false;
  ++*pos;  // '}'
  return true;
}

double Sum(const std::vector<Sample>& samples, std::string_view name) {
  double sum = 0;
  for (const Sample& s : samples) {
    if (s.name == name) sum += s.value;
  }
  return sum;
}

// Per second of a counter's change; a counter that went down restarted from zero.
double PerSecond(double before, double after, double seconds) {
  if (seconds <= 0) return 0;
  return (after >= before ? after - before : after) / seconds;
}

}  // namespace

StatusOr<std::vector<Sample>> ParseMetricsText(std::string_view text) {
  std::vector<Sample> samples;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(absl::string_view(text.data(), text.size()), '\n')) {
    ++line_number;
    if (line.empty() || line[0] == '#') continue;
    Sample sample;
    size_t pos = 0;
    while (pos < line.size() && (std::isalnum(static_cast<unsigned char>(line[pos])) ||
                                 line[pos] == '_' || line[pos] == ':')) {
      ++pos;
    }
    sample.name = std::string(line.substr(0, pos));
    const bool labels_ok =
        ParseLabels(std::string_view(line.data(), line.size()), &pos, &sample.labels);
    const absl::string_view rest = pos < line.size() ? line.substr(pos) : absl::string_view();
    std::vector<absl::string_view> fields = absl::StrSplit(rest, ' ', absl::SkipEmpty());
    double value = 0;
    if (sample.name.empty() || !labels_ok || fields.empty() ||
        !(absl::SimpleAtod(fields[0], &value) || fields[0] == "+Inf" || fields[0] == "NaN")) {
      return errors::InvalidArgument("line ", line_number, " is not a metric sample: \"",
                                     std::string(line.substr(0, 120)), "\"");
    }
    sample.value = value;
    samples.push_back(std::move(sample));
  }
  return samples;
}

TaskTotals Totals(const std::vector<Sample>& samples) {
  TaskTotals t;
  for (const Sample& s : samples) {
    if (t.task.empty()) {
      auto job = s.labels.find("tw_job");
      auto task = s.labels.find("tw_task");
      if (job != s.labels.end() && task != s.labels.end())
        t.task = job->second + ":" + task->second;
    }
    if (s.name == "tw_steps_total") {
      auto code = s.labels.find("code");
      (code != s.labels.end() && code->second == "OK" ? t.steps_ok : t.steps_failed) += s.value;
    } else if (s.name == "tw_rpc_server_handled_total") {
      t.rpcs += s.value;
      auto code = s.labels.find("code");
      if (code == s.labels.end() || code->second != "OK") t.rpc_errors += s.value;
    }
  }
  t.bytes_in = Sum(samples, "tw_rpc_server_received_bytes_total");
  t.bytes_out = Sum(samples, "tw_rpc_server_sent_bytes_total");
  t.cpu_seconds = Sum(samples, "process_cpu_seconds_total");
  t.resident_bytes = Sum(samples, "process_resident_memory_bytes");
  t.sessions = Sum(samples, "tw_sessions");
  t.variable_bytes = Sum(samples, "tw_variable_bytes");
  t.queued = Sum(samples, "tw_queue_size");
  return t;
}

TaskRates Rates(const TaskTotals& before, const TaskTotals& after, double seconds) {
  return {.steps = PerSecond(before.steps_ok, after.steps_ok, seconds),
          .failed_steps = PerSecond(before.steps_failed, after.steps_failed, seconds),
          .rpcs = PerSecond(before.rpcs, after.rpcs, seconds),
          .rpc_errors = PerSecond(before.rpc_errors, after.rpc_errors, seconds),
          .bytes_in = PerSecond(before.bytes_in, after.bytes_in, seconds),
          .bytes_out = PerSecond(before.bytes_out, after.bytes_out, seconds),
          .cpu = PerSecond(before.cpu_seconds, after.cpu_seconds, seconds)};
}

}  // namespace tw::top
