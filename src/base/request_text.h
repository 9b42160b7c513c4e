// Quoting what a request sent in an error message, bounded.
//
// An error travels back to the client in gRPC's trailing metadata, which clients cap (8 KB
// by default): a message that quoted a 1 MB session handle whole would reach the client as
// RESOURCE_EXHAUSTED "received initial metadata size exceeds limit" instead of the error.
// Every string from a request that an error message quotes (handles, node, tensor and
// rendezvous names, devices) goes through QuoteRequestText.
#ifndef TENSORWEAVE_SRC_BASE_REQUEST_TEXT_H_
#define TENSORWEAVE_SRC_BASE_REQUEST_TEXT_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace tw {

// The most bytes of a request's string an error message quotes.
inline constexpr size_t kMaxQuotedRequestBytes = 128;

// `text` as an error message may quote it: whole when it has at most
// kMaxQuotedRequestBytes, else its first kMaxQuotedRequestBytes followed by
// "... (1048576 bytes)". Bytes that are not printable ASCII are C-escaped ("\xff"), so
// the message stays valid UTF-8 whatever the request held (a cut may fall inside a
// character; Python decodes the message as UTF-8). Thread-safe.
std::string QuoteRequestText(std::string_view text);

}  // namespace tw

#endif  // TENSORWEAVE_SRC_BASE_REQUEST_TEXT_H_
