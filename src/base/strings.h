// std::string_view adapters over abseil's string utilities (Debian's abseil has its own
// absl::string_view type, distinct from std::string_view), and the small parsers the
// configuration code shares.
#ifndef TENSORWEAVE_SRC_BASE_STRINGS_H_
#define TENSORWEAVE_SRC_BASE_STRINGS_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/string_view.h"

namespace tw {

inline absl::string_view ToAbsl(std::string_view s) { return {s.data(), s.size()}; }
inline std::string_view FromAbsl(absl::string_view s) { return {s.data(), s.size()}; }

// Every piece between separators, empty ones included ("a,,b" -> "a", "", "b").
std::vector<std::string_view> Split(std::string_view text, char separator);
// `text` without leading and trailing ASCII whitespace.
std::string_view StripWhitespace(std::string_view text);
std::string ToLower(std::string_view text);

// A decimal integer in [0, INT_MAX] with nothing around it (no sign, no spaces).
std::optional<int> ParseNonNegativeInt(std::string_view text);

}  // namespace tw

#endif  // TENSORWEAVE_SRC_BASE_STRINGS_H_
