#include "src/base/strings.h"

#include <charconv>

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"

namespace tw {

std::vector<std::string_view> Split(std::string_view text, char separator) {
  std::vector<std::string_view> out;
  for (absl::string_view piece : absl::StrSplit(ToAbsl(text), separator)) {
    out.push_back(FromAbsl(piece));
  }
  return out;
}

std::string_view StripWhitespace(std::string_view text) {
  return FromAbsl(absl::StripAsciiWhitespace(ToAbsl(text)));
}

std::string ToLower(std::string_view text) { return absl::AsciiStrToLower(ToAbsl(text)); }

std::optional<int> ParseNonNegativeInt(std::string_view text) {
  int value = -1;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value < 0) return std::nullopt;
  return value;
}

}  // namespace tw
