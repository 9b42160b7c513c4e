// Strict JSON parsing for input that comes from users (TF_CONFIG, --cluster flags, files).
//
// Unlike nlohmann::json::parse, this never throws: a syntax error comes back as
// InvalidArgument with the line, column and what was read, and a key repeated in one
// object is an error naming the key and where it is, instead of silently keeping one.
#ifndef TENSORWEAVE_SRC_BASE_JSON_H_
#define TENSORWEAVE_SRC_BASE_JSON_H_

#include <string>
#include <string_view>

#include "nlohmann/json.hpp"
#include "tensorweave/status.h"

namespace tw {

// `what` names the input in error messages, e.g. "TF_CONFIG" or "--cluster".
StatusOr<nlohmann::json> ParseJsonStrict(std::string_view text, std::string_view what);

// Serializes without ever throwing: invalid UTF-8 in strings is replaced.
std::string DumpJson(const nlohmann::json& value, int indent = -1);

// "object", "array", "string", "number", "boolean" or "null", for error messages.
std::string_view JsonTypeName(const nlohmann::json& value);

}  // namespace tw

#endif  // TENSORWEAVE_SRC_BASE_JSON_H_
