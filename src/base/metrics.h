// Process-wide metrics in Prometheus' data model: counters and histograms, each a family of
// series told apart by label values, plus collectors that compute gauges when scraped.
// Rendered in Prometheus' text exposition format (version 0.0.4) by a task's metrics
// endpoint (src/rpc/metrics_server.h).
//
//   static Counter* steps =
//       Metrics().CounterFamily("tw_steps_total", "Steps run.", {"outcome"}).With({"ok"});
//   steps->Add(1);
//
// Recording is a relaxed atomic add (and, for histograms, a search among a dozen bucket
// bounds). The runtime records only once some server of the process serves metrics
// (RecordingMetrics()), so a process without an endpoint pays one relaxed load per step.
// Look a series up once and keep the pointer; series live as long as the process.
#ifndef TENSORWEAVE_SRC_BASE_METRICS_H_
#define TENSORWEAVE_SRC_BASE_METRICS_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"

namespace tw {

// A value that only goes up.
class Counter {
 public:
  void Add(double v) { value_.fetch_add(v, std::memory_order_relaxed); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

// Observations counted into buckets with upper bounds `bounds` (ascending; +Inf is
// implicit), with their sum.
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void Observe(double v);

  const std::vector<double>& bounds() const { return bounds_; }
  // Per bucket (not cumulative), the last one being +Inf's.
  std::vector<uint64_t> counts() const;
  double sum() const { return sum_.load(std::memory_order_relaxed); }

 private:
  const std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> counts_;
  std::atomic<double> sum_{0};
};

// Bucket bounds for latencies in seconds: 50 µs to 10 s.
std::vector<double> LatencyBuckets();
// Bucket bounds for sizes in bytes: 64 B to 1 GiB, by 4x.
std::vector<double> ByteBuckets();

// The series of one metric, one per combination of label values.
template <typename T>
class Family {
 public:
  Family(std::vector<std::string> labels, std::function<std::unique_ptr<T>()> make)
      : labels_(std::move(labels)), make_(std::move(make)) {}
  // The series with these label values (as many as the family has labels), made on first
  // use. The pointer stays valid for the life of the process.
  T* With(const std::vector<std::string>& values);

  const std::vector<std::string>& labels() const { return labels_; }
  // Calls `fn(values, series)` for each series, in label order.
  void ForEach(const std::function<void(const std::vector<std::string>&, const T&)>& fn) const;

 private:
  const std::vector<std::string> labels_;
  const std::function<std::unique_ptr<T>()> make_;
  mutable absl::Mutex mu_;
  std::map<std::vector<std::string>, std::unique_ptr<T>> series_ ABSL_GUARDED_BY(mu_);
};

// Gauges a collector reports at scrape time.
struct GaugeSample {
  std::string name, help;
  std::vector<std::pair<std::string, std::string>> labels;
  double value = 0;
  bool counter = false;  // a value that only goes up (process_cpu_seconds_total)
};
using Collector = std::function<void(std::vector<GaugeSample>*)>;

class MetricsRegistry {
 public:
  // Families by name: asking twice for one name returns the same family (the help, labels
  // and buckets of the first call win).
  Family<Counter>& CounterFamily(const std::string& name, const std::string& help,
                                 std::vector<std::string> labels = {});
  Family<Histogram>& HistogramFamily(const std::string& name, const std::string& help,
                                     std::vector<std::string> labels, std::vector<double> bounds);

  // Adds a collector until the returned handle is destroyed (an object reporting its own
  // state removes its collector before it goes). A collector with an `owner` (a server)
  // reports only to that owner's Render: a process may hold several servers, each with
  // its own endpoint.
  class CollectorHandle {
   public:
    CollectorHandle() = default;
    CollectorHandle(MetricsRegistry* registry, int id) : registry_(registry), id_(id) {}
    CollectorHandle(CollectorHandle&& other) noexcept { *this = std::move(other); }
    CollectorHandle& operator=(CollectorHandle&& other) noexcept;
    ~CollectorHandle();

   private:
    MetricsRegistry* registry_ = nullptr;
    int id_ = 0;
  };
  [[nodiscard]] CollectorHandle AddCollector(Collector collector, const void* owner = nullptr);

  // Every metric in Prometheus' text format, each series also labelled with `constant`
  // (say job and task), sorted by name: the counters and histograms, the collectors without
  // an owner and those of `owner`.
  std::string Render(const std::vector<std::pair<std::string, std::string>>& constant = {},
                     const void* owner = nullptr) const;

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, std::pair<std::string, std::unique_ptr<Family<Counter>>>> counters_
      ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::pair<std::string, std::unique_ptr<Family<Histogram>>>> histograms_
      ABSL_GUARDED_BY(mu_);
  std::map<int, std::pair<const void*, Collector>> collectors_ ABSL_GUARDED_BY(mu_);
  int next_collector_ ABSL_GUARDED_BY(mu_) = 1;
};

// The process's registry. Holds the process_* gauges (CPU seconds, resident memory, open
// file descriptors, start time) from the start.
MetricsRegistry& Metrics();

// Whether the runtime records its metrics (steps, tensor bytes): false until the first call
// of StartRecordingMetrics (a server starting its metrics endpoint), then true for good.
bool RecordingMetrics();
void StartRecordingMetrics();

// Escapes a label value for the text format (backslash, double quote, newline).
std::string EscapeLabelValue(const std::string& value);

template <typename T>
T* Family<T>::With(const std::vector<std::string>& values) {
  absl::MutexLock lock(&mu_);
  std::unique_ptr<T>& series = series_[values];
  if (series == nullptr) series = make_();
  return series.get();
}

template <typename T>
void Family<T>::ForEach(
    const std::function<void(const std::vector<std::string>&, const T&)>& fn) const {
  absl::MutexLock lock(&mu_);
  for (const auto& [values, series] : series_) fn(values, *series);
}

}  // namespace tw

#endif  // TENSORWEAVE_SRC_BASE_METRICS_H_
