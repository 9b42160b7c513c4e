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

Status ResourceLocation::Init(OpKernelConstruction* c) {
  TW_RETURN_IF_ERROR(c->GetAttr("container", &container));
  TW_RETURN_IF_ERROR(c->GetAttr("shared_name", &shared_name));
  TW_RETURN_IF_ERROR(ValidateContainerAttr(container));
  return ValidateSharedNameAttr(shared_name);
}

std::string ResourceLocation::Container(OpKernelContext* ctx) const {
  return container.empty() ? ctx->resource_manager()->default_container() : container;
}

std::string ResourceLocation::Name(OpKernelContext* ctx, const std::string& node) const {
  return !shared_name.empty() ? shared_name : "_" + std::string(ctx->session_handle()) + "_" + node;
}

}  // namespace tw
