// Conversions between tw::Status and grpc::Status, and channel settings shared by clients.
#ifndef TENSORWEAVE_SRC_RPC_GRPC_UTIL_H_
#define TENSORWEAVE_SRC_RPC_GRPC_UTIL_H_

#include <memory>
#include <string>

#include "grpcpp/grpcpp.h"
#include "tensorweave/status.h"
#include "tensorweave/tls.h"

namespace tw {

// The longest error message sent back. gRPC carries it in the reply's metadata, which
// clients cap (8 KB by default): a longer one would reach the client as RESOURCE_EXHAUSTED
// "received initial metadata size exceeds limit" instead of the error. Messages quote
// request strings through QuoteRequestText (src/base/request_text.h); this cut is the
// backstop for any other path.
inline constexpr size_t kMaxGrpcErrorMessageBytes = 4096;

inline grpc::Status ToGrpcStatus(const Status& s) {
  if (s.ok()) return grpc::Status::OK;
  std::string message(s.message());
  if (message.size() > kMaxGrpcErrorMessageBytes) {
    message.resize(kMaxGrpcErrorMessageBytes);
    // Cut at a character boundary: the client decodes the message as UTF-8.
    while (!message.empty() && (static_cast<unsigned char>(message.back()) & 0xC0) == 0x80) {
      message.pop_back();
    }
    if (!message.empty() && static_cast<unsigned char>(message.back()) >= 0xC0) {
      message.pop_back();
    }
    message += "... (cut: the message had " + std::to_string(s.message().size()) + " bytes)";
  }
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), std::move(message));
}

// gRPC reports a peer whose TLS certificate does not name the address dialed as
// Unavailable, which callers retry (a task restarting is Unavailable too). It never
// heals: it is Unauthenticated here, with what to do about it, so that a misconfigured
// cluster fails at once instead of waiting for its deadlines.
inline Status FromGrpcStatus(const grpc::Status& s) {
  if (s.ok()) return OkStatus();
  if (s.error_code() == grpc::StatusCode::UNAVAILABLE &&
      s.error_message().find("is not in peer certificate") != std::string::npos) {
    return Status(absl::StatusCode::kUnauthenticated,
                  s.error_message() +
                      " (the peer's TLS certificate must name the address dialed, localhost "
                      "included for a task's sessions on its own server, or every task must "
                      "set the same TlsOptions::server_name; docs/security.md)");
  }
  return Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
}

// The HTTP/2 stream window a receiver offers from a stream's start (gRPC's "lookahead"),
// set on every server and on every channel but the chunk connections (NewChannel with
// `connection` 0: sessions, RunGraph and its inline tensors, control calls). With
// gRPC's default a stream starts small and BDP probing grows it only as traffic goes on, so
// a 1 MB tensor inside a RunGraph message waits for window updates. Measured with
// bench/tcp_path_bench in alternating runs (4 pairs, shared memory off, against iperf3 in
// each run): 1 MB push 0.42x -> 0.47x, 16 MB pull 0.68x -> 0.76x, 64 MB pull 0.78x ->
// 0.87x, 256 MB push 0.61x -> 0.71x (docs/performance.md, "Between hosts").
inline constexpr int kStreamWindowBytes = 4 << 20;

// A channel to "host:port" with no message size limit (tensors of 1 GiB and more cross),
// secured by `tls` (insecure when it is not enabled; see src/rpc/grpc_tls.h). With
// `tls.server_name` set, the server's certificate is checked against that name instead of
// the host of `address`. Precondition: tls.Validate().ok().
// Channels of different `connection` numbers to one address never share a TCP connection
// (gRPC otherwise shares one among channels made alike).
std::shared_ptr<grpc::Channel> NewChannel(const std::string& address, const TlsOptions& tls,
                                          int connection = 0);

// Tells glibc to keep freed memory (once per process; servers and grpc:// sessions call
// it). gRPC receives into ~64 KiB buffers it frees after each message; as shipped, glibc
// hands that memory back to the kernel, and every message of a large transfer then pays
// a page fault per 4 KiB page (about 10 µs each on the machines we measured). Trimming is
// raised to 1 GiB and allocations below 64 MiB stay on the heap; tensors of 1 MiB and more
// come from BufferPool, which is not affected.
void KeepFreedMemory();

}  // namespace tw

#endif  // TENSORWEAVE_SRC_RPC_GRPC_UTIL_H_
