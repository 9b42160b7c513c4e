#include "src/base/metrics.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tw {
namespace {

// A number as Prometheus reads it: whole numbers as integers, others in the shortest form
// that reads back exactly, "+Inf" for infinity.
std::string Number(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (std::isnan(v)) return "NaN";
  if (v == std::trunc(v) && std::fabs(v) < 1e15) {  // counts and bytes: as integers
    return std::to_string(static_cast<int64_t>(v));
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  // %.17g gives 0.10000000000000001 for 0.1; prefer the shortest form that reads back.
  for (int precision = 1; precision < 17; ++precision) {
    char shorter[32];
    std::snprintf(shorter, sizeof(shorter), "%.*g", precision, v);
    if (std::strtod(shorter, nullptr) == v) return shorter;
  }
  return buf;
}

using Labels = std::vector<std::pair<std::string, std::string>>;

std::string LabelSet(const Labels& labels) {
  if (labels.empty()) return "";
  std::string out = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    absl::StrAppend(&out, i == 0 ? "" : ",", labels[i].first, "=\"",
                    EscapeLabelValue(labels[i].second), "\"");
  }
  return out + "}";
}

Labels Join(const Labels& constant, const std::vector<std::string>& names,
            const std::vector<std::string>& values) {
  Labels labels = constant;
  for (size_t i = 0; i < names.size() && i < values.size(); ++i) {
    labels.emplace_back(names[i], values[i]);
  }
  return labels;
}

// Help text with backslashes and newlines escaped, as the format requires.
std::string EscapeHelp(const std::string& help) {
  std::string out;
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

// The process_* metrics Prometheus' client libraries export, from /proc/self.
void ProcessSamples(std::vector<GaugeSample>* out) {
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  std::ifstream stat_file("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(stat_file)), std::istreambuf_iterator<char>());
  // Fields after the command, which is in parentheses and may hold spaces.
  const size_t close = stat.rfind(')');
  if (close != std::string::npos) {
    std::vector<std::string> f = absl::StrSplit(stat.substr(close + 2), ' ');
    // f[0] is field 3 (state): utime is field 14, stime 15, starttime 22, rss 24.
    if (f.size() > 22) {
      const double cpu = (std::atof(f[11].c_str()) + std::atof(f[12].c_str())) / ticks;
      out->push_back(
          {"process_cpu_seconds_total", "User and system CPU time in seconds.", {}, cpu, true});
      out->push_back({"process_resident_memory_bytes",
                      "Resident memory in bytes.",
                      {},
                      std::atof(f[21].c_str()) * page});
      std::ifstream uptime("/proc/uptime");
      double up = 0;
      uptime >> up;
      const double boot = static_cast<double>(std::time(nullptr)) - up;
      out->push_back({"process_start_time_seconds",
                      "Start time since the Unix epoch.",
                      {},
                      boot + std::atof(f[19].c_str()) / ticks});
    }
  }
  int fds = 0;
  if (DIR* dir = opendir("/proc/self/fd")) {
    while (readdir(dir) != nullptr) ++fds;
    closedir(dir);
    fds -= 3;  // ".", ".." and the directory's own descriptor
  }
  out->push_back({"process_open_fds", "Open file descriptors.", {}, static_cast<double>(fds)});
}

}  // namespace

std::string EscapeLabelValue(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(new std::atomic<uint64_t>[bounds_.size() + 1]) {
  for (size_t i = 0; i <= bounds_.size(); ++i) counts_[i].store(0, std::memory_order_relaxed);
}

void Histogram::Observe(double v) {
  const size_t bucket = std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin();
  counts_[bucket].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(v, std::memory_order_relaxed);
}

std::vector<uint64_t> Histogram::counts() const {
  std::vector<uint64_t> out(bounds_.size() + 1);
  for (size_t i = 0; i < out.size(); ++i) out[i] = counts_[i].load(std::memory_order_relaxed);
  return out;
}

std::vector<double> LatencyBuckets() {
  return {50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3,
          25e-3, 50e-3,  0.1,    0.25,   0.5,  1,      2.5,  10};
}

std::vector<double> ByteBuckets() {
  std::vector<double> bounds;
  for (double b = 64; b <= double{1 << 30}; b *= 4) bounds.push_back(b);
  return bounds;
}

Family<Counter>& MetricsRegistry::CounterFamily(const std::string& name, const std::string& help,
                                                std::vector<std::string> labels) {
  absl::MutexLock lock(&mu_);
  auto& entry = counters_[name];
  if (entry.second == nullptr) {
    entry.first = help;
    entry.second = std::make_unique<Family<Counter>>(std::move(labels),
                                                     [] { return std::make_unique<Counter>(); });
  }
  return *entry.second;
}

Family<Histogram>& MetricsRegistry::HistogramFamily(const std::string& name,
                                                    const std::string& help,
                                                    std::vector<std::string> labels,
                                                    std::vector<double> bounds) {
  absl::MutexLock lock(&mu_);
  auto& entry = histograms_[name];
  if (entry.second == nullptr) {
    entry.first = help;
    entry.second = std::make_unique<Family<Histogram>>(
        std::move(labels), [bounds] { return std::make_unique<Histogram>(bounds); });
  }
  return *entry.second;
}

MetricsRegistry::CollectorHandle& MetricsRegistry::CollectorHandle::operator=(
    CollectorHandle&& other) noexcept {
  if (this != &other) {
    this->~CollectorHandle();
    registry_ = std::exchange(other.registry_, nullptr);
    id_ = other.id_;
  }
  return *this;
}

MetricsRegistry::CollectorHandle::~CollectorHandle() {
  if (registry_ == nullptr) return;
  absl::MutexLock lock(&registry_->mu_);
  registry_->collectors_.erase(id_);
  registry_ = nullptr;
}

MetricsRegistry::CollectorHandle MetricsRegistry::AddCollector(Collector collector,
                                                               const void* owner) {
  absl::MutexLock lock(&mu_);
  const int id = next_collector_++;
  collectors_[id] = {owner, std::move(collector)};
  return CollectorHandle(this, id);
}

std::string MetricsRegistry::Render(const Labels& constant, const void* owner) const {
  // name -> its lines: TYPE and HELP first, then the series.
  std::map<std::string, std::string> out;
  auto header = [&](const std::string& name, const std::string& help, const char* type) {
    std::string& text = out[name];
    if (text.empty())
      absl::StrAppend(&text, "# HELP ", name, " ", EscapeHelp(help), "\n", "# TYPE ", name, " ",
                      type, "\n");
    return &text;
  };
  std::vector<GaugeSample> samples;
  {
    absl::MutexLock lock(&mu_);
    // Named references, not structured bindings: lambdas below use them (clang 14 cannot
    // capture a binding).
    for (const auto& counter : counters_) {
      const std::string& name = counter.first;
      const auto& entry = counter.second;
      std::string* text = header(name, entry.first, "counter");
      entry.second->ForEach([&](const std::vector<std::string>& values, const Counter& c) {
        absl::StrAppend(text, name, LabelSet(Join(constant, entry.second->labels(), values)), " ",
                        Number(c.value()), "\n");
      });
    }
    for (const auto& histogram : histograms_) {
      const std::string& name = histogram.first;
      const auto& entry = histogram.second;
      std::string* text = header(name, entry.first, "histogram");
      entry.second->ForEach([&](const std::vector<std::string>& values, const Histogram& h) {
        const Labels labels = Join(constant, entry.second->labels(), values);
        const std::vector<uint64_t> counts = h.counts();
        uint64_t cumulative = 0;
        for (size_t i = 0; i < counts.size(); ++i) {
          cumulative += counts[i];
          Labels with_le = labels;
          with_le.emplace_back("le", i < h.bounds().size() ? Number(h.bounds()[i]) : "+Inf");
          absl::StrAppend(text, name, "_bucket", LabelSet(with_le), " ", cumulative, "\n");
        }
        absl::StrAppend(text, name, "_sum", LabelSet(labels), " ", Number(h.sum()), "\n");
        absl::StrAppend(text, name, "_count", LabelSet(labels), " ", cumulative, "\n");
      });
    }
    // Collectors run under the lock, so none is removed (and its object destroyed) while it
    // runs; they must not call back into the registry.
    for (const auto& [id, entry] : collectors_) {
      if (entry.first == nullptr || entry.first == owner) entry.second(&samples);
    }
  }
  ProcessSamples(&samples);
  for (const GaugeSample& s : samples) {
    Labels labels = constant;
    labels.insert(labels.end(), s.labels.begin(), s.labels.end());
    absl::StrAppend(header(s.name, s.help, s.counter ? "counter" : "gauge"), s.name,
                    LabelSet(labels), " ", Number(s.value), "\n");
  }
  std::string text;
  for (const auto& [name, lines] : out) text += lines;
  return text;
}

namespace {
std::atomic<bool> recording{false};
}  // namespace

bool RecordingMetrics() { return recording.load(std::memory_order_relaxed); }
void StartRecordingMetrics() { recording.store(true, std::memory_order_relaxed); }

MetricsRegistry& Metrics() {
  static auto* registry = new MetricsRegistry();
  return *registry;
}

}  // namespace tw
