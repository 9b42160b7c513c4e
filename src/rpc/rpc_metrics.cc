#include "src/rpc/rpc_metrics.h"

#include <array>
#include <chrono>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/support/byte_buffer.h"
#include "src/base/metrics.h"

namespace tw {
namespace {

using Clock = std::chrono::steady_clock;

// One method's series, looked up once per method and kept.
struct MethodSeries {
  std::array<Counter*, 17> handled{};  // by status code (gRPC's 0..16)
  Histogram* seconds = nullptr;
  Counter* received = nullptr;
  Counter* sent = nullptr;
};

// "/tw.proto.WorkerService/RunGraph" -> "WorkerService/RunGraph".
std::string ShortName(const std::string& method) {
  const size_t slash = method.rfind('/');
  const size_t dot = method.rfind('.', slash);
  return slash == std::string::npos || dot == std::string::npos ? method : method.substr(dot + 1);
}

// Methods with series of their own; calls of any further method names (a client can send
// any path) share the series of "other", so what a client sends cannot grow the metrics
// without bound.
constexpr size_t kMaxMethods = 64;

const MethodSeries& SeriesOf(const char* method) {
  static absl::Mutex mu;
  static auto* by_method = new std::map<std::string, MethodSeries>();
  std::string full = method == nullptr ? "" : method;
  absl::MutexLock lock(&mu);
  if (by_method->size() >= kMaxMethods && by_method->count(full) == 0) full = "other";
  MethodSeries& series = (*by_method)[full];
  if (series.seconds == nullptr) {
    const std::string name = ShortName(full);
    auto& handled = Metrics().CounterFamily("tw_rpc_server_handled_total",
                                            "RPCs completed by the server, by method and status "
                                            "code.",
                                            {"method", "code"});
    for (int code = 0; code < 17; ++code) {
      series.handled[code] =
          handled.With({name, absl::StatusCodeToString(static_cast<absl::StatusCode>(code))});
    }
    series.seconds = Metrics()
                         .HistogramFamily("tw_rpc_server_handling_seconds",
                                          "Time from an RPC's start to its status, seconds.",
                                          {"method"}, LatencyBuckets())
                         .With({name});
    series.received =
        Metrics()
            .CounterFamily("tw_rpc_server_received_bytes_total",
                           "Bytes of the request messages the server received.", {"method"})
            .With({name});
    series.sent = Metrics()
                      .CounterFamily("tw_rpc_server_sent_bytes_total",
                                     "Bytes of the response messages the server sent.", {"method"})
                      .With({name});
  }
  return series;
}

class RpcMetricsInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit RpcMetricsInterceptor(grpc::experimental::ServerRpcInfo* info)
      : series_(SeriesOf(info->method())),
        // tensorweave's own services take raw byte buffers (grpc_services.cc); others (the
        // health service) their protobuf messages, whose size is not read here.
        raw_(info->method() != nullptr &&
             std::string_view(info->method()).rfind("/tw.proto.", 0) == 0),
        start_(Clock::now()) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    using Hook = grpc::experimental::InterceptionHookPoints;
    if (raw_ && methods->QueryInterceptionHookPoint(Hook::POST_RECV_MESSAGE)) {
      if (auto* message = static_cast<grpc::ByteBuffer*>(methods->GetRecvMessage())) {
        series_.received->Add(static_cast<double>(message->Length()));
      }
    }
    if (raw_ && methods->QueryInterceptionHookPoint(Hook::PRE_SEND_MESSAGE)) {
      if (const grpc::ByteBuffer* message = methods->GetSerializedSendMessage()) {
        series_.sent->Add(static_cast<double>(message->Length()));
      }
    }
    if (methods->QueryInterceptionHookPoint(Hook::PRE_SEND_STATUS)) {
      const int code = methods->GetSendStatus().error_code();
      series_.handled[code >= 0 && code < 17 ? code : 2]->Add(1);  // 2: UNKNOWN
      series_.seconds->Observe(std::chrono::duration<double>(Clock::now() - start_).count());
    }
    methods->Proceed();
  }

 private:
  const MethodSeries& series_;
  const bool raw_;
  const Clock::time_point start_;
};

class Factory final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new RpcMetricsInterceptor(info);
  }
};

}  // namespace

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> NewRpcMetricsInterceptor() {
  return std::make_unique<Factory>();
}

}  // namespace tw
