// TlsOptions (public, no gRPC in its interface) and the gRPC credentials built from it.
// LoadTlsFiles lives here rather than in src/base because TLS is a transport concern and
// this is the only code that consumes the PEM text.
#include "src/rpc/grpc_tls.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace tw {
namespace {

// The whole file, or InvalidArgument naming it and the reason.
StatusOr<std::string> ReadWholeFile(const std::string& path, const std::string& role) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    return errors::InvalidArgument("cannot read TLS ", role, " file \"", path,
                                   "\": ", std::strerror(errno));
  }
  std::string text;
  char buffer[4096];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof(buffer), f)) > 0) text.append(buffer, n);
  // A directory opens but fails to read (EISDIR).
  const int read_errno = std::ferror(f) ? errno : 0;
  std::fclose(f);
  if (read_errno != 0) {
    return errors::InvalidArgument("cannot read TLS ", role, " file \"", path,
                                   "\": ", std::strerror(read_errno));
  }
  return text;
}

bool Contains(const std::string& text, const char* needle) {
  return text.find(needle) != std::string::npos;
}

}  // namespace

Status TlsOptions::Validate() const {
  if (!enabled()) return OkStatus();
  if (ca_cert_pem.empty()) {
    return errors::InvalidArgument("TLS options lack ca_cert_pem (the cluster CA certificate)");
  }
  if (cert_pem.empty()) {
    return errors::InvalidArgument("TLS options lack cert_pem (this process's certificate)");
  }
  if (key_pem.empty()) {
    return errors::InvalidArgument("TLS options lack key_pem (the certificate's private key)");
  }
  return OkStatus();
}

StatusOr<TlsOptions> LoadTlsFiles(const std::string& ca_path, const std::string& cert_path,
                                  const std::string& key_path) {
  TlsOptions tls;
  TW_ASSIGN_OR_RETURN(tls.ca_cert_pem, ReadWholeFile(ca_path, "CA certificate"));
  if (!Contains(tls.ca_cert_pem, "-----BEGIN CERTIFICATE-----")) {
    return errors::InvalidArgument("TLS CA certificate file \"", ca_path,
                                   "\" does not look like PEM: no -----BEGIN CERTIFICATE----- "
                                   "block");
  }
  TW_ASSIGN_OR_RETURN(tls.cert_pem, ReadWholeFile(cert_path, "certificate"));
  if (!Contains(tls.cert_pem, "-----BEGIN CERTIFICATE-----")) {
    return errors::InvalidArgument("TLS certificate file \"", cert_path,
                                   "\" does not look like PEM: no -----BEGIN CERTIFICATE----- "
                                   "block");
  }
  TW_ASSIGN_OR_RETURN(tls.key_pem, ReadWholeFile(key_path, "private key"));
  if (!Contains(tls.key_pem, "-----BEGIN ") || !Contains(tls.key_pem, "PRIVATE KEY-----")) {
    return errors::InvalidArgument("TLS private key file \"", key_path,
                                   "\" does not look like PEM: no -----BEGIN ... PRIVATE "
                                   "KEY----- block");
  }
  // gRPC has no way to ask for a passphrase; an encrypted key would only fail later, at
  // the first handshake, with a less helpful message.
  if (Contains(tls.key_pem, "ENCRYPTED")) {
    return errors::InvalidArgument("TLS private key file \"", key_path,
                                   "\" is encrypted; tensorweave needs an unencrypted key");
  }
  return tls;
}

Status CheckCertificateAndKey(const TlsOptions& tls) {
  if (!tls.enabled()) return OkStatus();
  // OpenSSL, which gRPC's TLS uses too, reads the PEM text from memory buffers. The
  // passphrase is "" (as gRPC's): an encrypted key fails instead of prompting on a terminal.
  char no_passphrase[] = "";
  auto read_bio = [](const std::string& text) {
    return std::unique_ptr<BIO, decltype(&BIO_free)>(
        BIO_new_mem_buf(text.data(), static_cast<int>(text.size())), &BIO_free);
  };
  using Certificate = std::unique_ptr<X509, decltype(&X509_free)>;
  auto read_certificate = [&](const std::string& pem) {
    auto bio = read_bio(pem);
    return Certificate(
        bio == nullptr ? nullptr : PEM_read_bio_X509(bio.get(), nullptr, nullptr, no_passphrase),
        &X509_free);
  };
  auto failed = [](const std::string& field, const std::string& what) {
    ERR_clear_error();  // leaves no error behind for gRPC's own OpenSSL calls
    return errors::InvalidArgument("the TLS ", field, " ", what);
  };
  constexpr char kNotACertificate[] = "does not parse as a PEM X.509 certificate";
  if (read_certificate(tls.ca_cert_pem) == nullptr) {
    return failed("CA certificate (ca_cert_pem)", kNotACertificate);
  }
  Certificate cert = read_certificate(tls.cert_pem);
  if (cert == nullptr) return failed("certificate (cert_pem)", kNotACertificate);
  auto key_bio = read_bio(tls.key_pem);
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
      key_bio == nullptr ? nullptr
                         : PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, no_passphrase),
      &EVP_PKEY_free);
  if (key == nullptr) {
    return failed("private key (key_pem)", "does not parse as an unencrypted PEM private key");
  }
  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    return failed("private key (key_pem)", "does not belong to the certificate (cert_pem)");
  }
  return OkStatus();
}

std::shared_ptr<grpc::ServerCredentials> NewServerCredentials(const TlsOptions& tls) {
  if (!tls.enabled()) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions options(
      GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_root_certs = tls.ca_cert_pem;
  options.pem_key_cert_pairs.push_back({tls.key_pem, tls.cert_pem});
  return grpc::SslServerCredentials(options);
}

std::shared_ptr<grpc::ChannelCredentials> NewChannelCredentials(const TlsOptions& tls) {
  if (!tls.enabled()) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = tls.ca_cert_pem;
  options.pem_private_key = tls.key_pem;
  options.pem_cert_chain = tls.cert_pem;
  return grpc::SslCredentials(options);
}

}  // namespace tw
