#include "src/ops/resource_attrs.h"

#include <cctype>

namespace tw {
namespace {

bool IsContainerChar(char ch, bool first) {
  const bool alnum = std::isalnum(static_cast<unsigned char>(ch)) != 0;
  if (first) return alnum || ch == '.';
  return alnum || ch == '.' || ch == '_' || ch == '-' || ch == '/';
}

}  // namespace

Status ValidateContainerAttr(const std::string& container) {
  for (size_t i = 0; i < container.size(); ++i) {
    if (!IsContainerChar(container[i], i == 0)) {
      return errors::InvalidArgument("container \"", container, "\" contains invalid characters");
    }
  }
  return OkStatus();
}

Status ValidateSharedNameAttr(const std::string& shared_name) {
  if (shared_name.starts_with("_")) {
    return errors::InvalidArgument("shared_name \"", shared_name, "\" must not start with '_'");
  }
  return OkStatus();
}

}  // namespace tw
