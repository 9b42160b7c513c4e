// Transport security for clusters: mutual TLS with certificates signed by a cluster CA.
//
// Every server of a TLS cluster presents its certificate, requires one from every caller
// (peers and clients alike) and accepts only certificates signed by the cluster CA; the
// channels a server opens to its peers present the same certificate. docs/security.md says
// what the certificates must contain and how to make them.
//
//   auto tls = tw::LoadTlsFiles("ca.pem", "task.pem", "task.key");
//   auto server = tw::Server::Create(cluster, "ps", 0, {.tls = *tls});
//   tw::ClientSession session(root, {.target = "grpc://ps-0:2222", .tls = *tls});
#ifndef TENSORWEAVE_TLS_H_
#define TENSORWEAVE_TLS_H_

#include <string>

#include "tensorweave/status.h"

namespace tw {

// PEM text, not file names. All empty (the default) means insecure (plaintext gRPC); all
// three set means mutual TLS; anything in between is rejected by Server::Create and
// Session::Create with InvalidArgument.
struct TlsOptions {
  // The cluster CA's certificate(s): peers must present a certificate chaining to it.
  std::string ca_cert_pem;
  // This process's certificate (chain), signed by the cluster CA. A server uses it both to
  // serve and as the client certificate of the channels it opens to its peers, so a
  // server's certificate must allow both uses (no extendedKeyUsage, or serverAuth and
  // clientAuth).
  std::string cert_pem;
  // The private key of `cert_pem`, unencrypted.
  std::string key_pem;
  // Optional. The name a server's certificate is checked against when dialing it. Empty:
  // the host part of the address dialed ("ps-0.ns.svc", "localhost", "127.0.0.1"), so
  // every task's certificate must name its own address. Set: one name (say
  // "tensorweave-cluster") that every server certificate carries as a DNS SAN, whatever
  // the addresses; the CA still vouches for the certificate.
  std::string server_name;

  // True when any field is set: the caller asked for TLS.
  bool enabled() const {
    return !ca_cert_pem.empty() || !cert_pem.empty() || !key_pem.empty() || !server_name.empty();
  }
  // OK when insecure (nothing set) or complete (CA, certificate and key all set).
  // InvalidArgument naming the missing field otherwise.
  Status Validate() const;
};

// Reads the three PEM files of a TlsOptions. InvalidArgument naming the file (and which
// role it plays) when a file cannot be read or does not hold what its role needs: a
// "-----BEGIN CERTIFICATE-----" block for the CA and the certificate, a
// "-----BEGIN ... PRIVATE KEY-----" block for the key.
StatusOr<TlsOptions> LoadTlsFiles(const std::string& ca_path, const std::string& cert_path,
                                  const std::string& key_path);

}  // namespace tw

#endif  // TENSORWEAVE_TLS_H_
