#include "src/base/logging.h"

#include "spdlog/sinks/stdout_color_sinks.h"

namespace tw {
namespace {

std::shared_ptr<spdlog::logger> MakeLogger() {
  if (auto existing = spdlog::get("tensorweave")) return existing;
  return spdlog::stderr_color_mt("tensorweave");
}

}  // namespace

spdlog::logger& Log() {
  // Never destroyed, so logging keeps working while other statics are torn down.
  static auto* logger = new std::shared_ptr<spdlog::logger>(MakeLogger());
  return **logger;
}

}  // namespace tw
