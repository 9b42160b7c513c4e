#include "tensorweave/status.h"

namespace tw::errors {

Status Annotate(const Status& status, std::string_view prefix) {
  if (status.ok()) return status;
  return Status(status.code(), internal::StrCatAny(prefix, status.message()));
}

}  // namespace tw::errors
