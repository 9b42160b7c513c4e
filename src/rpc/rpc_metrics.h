// A gRPC server interceptor that counts every call a server handles, for the metrics
// endpoint (src/base/metrics.h): calls by method and status code, their latency from the
// call's start to its status, and the bytes of their messages in each direction.
//
//   tw_rpc_server_handled_total{method,code}   tw_rpc_server_handling_seconds{method}
//   tw_rpc_server_received_bytes_total{method} tw_rpc_server_sent_bytes_total{method}
//
// `method` is "WorkerService/RunGraph" and the like. Installed on the servers that serve
// metrics (recording costs a few atomic adds per call; docs/performance.md measures it).
#ifndef TENSORWEAVE_SRC_RPC_RPC_METRICS_H_
#define TENSORWEAVE_SRC_RPC_RPC_METRICS_H_

#include <memory>

#include "grpcpp/support/server_interceptor.h"

namespace tw {

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> NewRpcMetricsInterceptor();

}  // namespace tw

#endif  // TENSORWEAVE_SRC_RPC_RPC_METRICS_H_
