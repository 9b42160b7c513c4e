#include "src/base/request_text.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace tw {

std::string QuoteRequestText(std::string_view text) {
  const std::string_view shown = text.substr(0, kMaxQuotedRequestBytes);
  // CHexEscape also escapes quotes and backslashes, which keeps the quote unambiguous.
  std::string out = absl::CHexEscape(absl::string_view(shown.data(), shown.size()));
  if (shown.size() < text.size()) absl::StrAppend(&out, "... (", text.size(), " bytes)");
  return out;
}

}  // namespace tw
