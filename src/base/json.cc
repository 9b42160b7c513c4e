#include "src/base/json.h"

#include <set>
#include <vector>

namespace tw {
namespace {

using Json = nlohmann::json;

// A SAX handler that builds the DOM through nlohmann's own DOM builder, and in addition
// records the first syntax error and rejects keys repeated within one object.
class StrictDomBuilder {
 public:
  explicit StrictDomBuilder(Json* result) : dom_(*result, /*allow_exceptions_=*/false) {}

  bool null() { return dom_.null(); }
  bool boolean(bool v) { return dom_.boolean(v); }
  bool number_integer(Json::number_integer_t v) { return dom_.number_integer(v); }
  bool number_unsigned(Json::number_unsigned_t v) { return dom_.number_unsigned(v); }
  bool number_float(Json::number_float_t v, const Json::string_t& s) {
    return dom_.number_float(v, s);
  }
  bool string(Json::string_t& v) { return dom_.string(v); }
  bool binary(Json::binary_t& v) { return dom_.binary(v); }
  bool start_object(std::size_t n) {
    keys_.emplace_back();
    return dom_.start_object(n);
  }
  bool key(Json::string_t& k) {
    if (!keys_.back().insert(k).second) {
      error_ = "duplicate key \"" + k + "\"" +
               (keys_.size() == 1 ? std::string(" at the top level") : " in \"" + Path() + "\"");
      return false;
    }
    if (path_.size() < keys_.size()) path_.resize(keys_.size());
    path_[keys_.size() - 1] = k;
    return dom_.key(k);
  }
  bool end_object() {
    keys_.pop_back();
    if (path_.size() > keys_.size()) path_.resize(keys_.size());
    return dom_.end_object();
  }
  bool start_array(std::size_t n) { return dom_.start_array(n); }
  bool end_array() { return dom_.end_array(); }
  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::detail::exception& ex) {
    std::string what = ex.what();
    // Drop nlohmann's "[json.exception.parse_error.101] " prefix; keep the position text.
    if (const size_t close = what.find("] ");
        what.rfind("[json.exception", 0) == 0 && close != std::string::npos) {
      what = what.substr(close + 2);
    }
    error_ = what;
    return dom_.parse_error(position, last_token, ex);
  }

  const std::string& error() const { return error_; }

 private:
  std::string Path() const {
    std::string p;
    for (size_t i = 0; i + 1 < keys_.size() && i < path_.size(); ++i) {
      if (!p.empty()) p += ".";
      p += path_[i];
    }
    return p;
  }

  nlohmann::detail::json_sax_dom_parser<Json> dom_;
  std::vector<std::set<std::string>> keys_;  // keys seen, per open object
  std::vector<std::string> path_;            // the key being read at each open object
  std::string error_;
};

}  // namespace

StatusOr<nlohmann::json> ParseJsonStrict(std::string_view text, std::string_view what) {
  Json result;
  StrictDomBuilder builder(&result);
  const bool ok = Json::sax_parse(text.begin(), text.end(), &builder,
                                  nlohmann::detail::input_format_t::json, /*strict=*/true);
  if (!ok || !builder.error().empty()) {
    return errors::InvalidArgument(
        what, " is not valid JSON: ", builder.error().empty() ? "parse error" : builder.error());
  }
  return result;
}

std::string DumpJson(const nlohmann::json& value, int indent) {
  return value.dump(indent, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

std::string_view JsonTypeName(const nlohmann::json& value) {
  switch (value.type()) {
    case Json::value_t::object:
      return "object";
    case Json::value_t::array:
      return "array";
    case Json::value_t::string:
      return "string";
    case Json::value_t::boolean:
      return "boolean";
    case Json::value_t::null:
      return "null";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
      return "number";
    default:
      return "value";
  }
}

}  // namespace tw
