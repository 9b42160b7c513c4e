// Conversions between tw::Status and grpc::Status, and channel settings shared by clients.
#ifndef TENSORWEAVE_SRC_RPC_GRPC_UTIL_H_
#define TENSORWEAVE_SRC_RPC_GRPC_UTIL_H_

#include <memory>
#include <string>

#include "grpcpp/grpcpp.h"
#include "tensorweave/status.h"

namespace tw {

inline grpc::Status ToGrpcStatus(const Status& s) {
  if (s.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), std::string(s.message()));
}

inline Status FromGrpcStatus(const grpc::Status& s) {
  if (s.ok()) return OkStatus();
  return Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
}

// A channel to "host:port" with no message size limit (tensors of 1 GiB and more cross).
std::shared_ptr<grpc::Channel> NewChannel(const std::string& address);

}  // namespace tw

#endif  // TENSORWEAVE_SRC_RPC_GRPC_UTIL_H_
