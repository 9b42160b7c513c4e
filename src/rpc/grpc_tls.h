// gRPC credentials from TlsOptions (include/tensorweave/tls.h): the one place that turns
// PEM text into gRPC security settings, for the server's listening port and for every
// channel a server or session opens.
#ifndef TENSORWEAVE_SRC_RPC_GRPC_TLS_H_
#define TENSORWEAVE_SRC_RPC_GRPC_TLS_H_

#include <memory>

#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"
#include "tensorweave/tls.h"

namespace tw {

// Insecure when `tls` is not enabled; otherwise TLS with the certificate and key of `tls`,
// requiring every caller to present a certificate that chains to `tls.ca_cert_pem` (gRPC
// refuses the handshake otherwise, before any call reaches a service).
// Precondition: tls.Validate().ok().
std::shared_ptr<grpc::ServerCredentials> NewServerCredentials(const TlsOptions& tls);

// InvalidArgument when `tls.ca_cert_pem`, `tls.cert_pem` or `tls.key_pem` does not parse
// (an encrypted key does not either), or the key is not the certificate's: a server checks
// this at Start, since gRPC would otherwise find it only when connections come. OK when TLS
// is not enabled.
Status CheckCertificateAndKey(const TlsOptions& tls);

// Insecure when `tls` is not enabled; otherwise TLS that verifies the server's certificate
// against `tls.ca_cert_pem` (and its name, see TlsOptions::server_name) and presents
// `tls.cert_pem` as the client certificate. Precondition: tls.Validate().ok().
std::shared_ptr<grpc::ChannelCredentials> NewChannelCredentials(const TlsOptions& tls);

}  // namespace tw

#endif  // TENSORWEAVE_SRC_RPC_GRPC_TLS_H_
