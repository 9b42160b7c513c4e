// The library's logger: spdlog, writing to stderr so that a program's stdout stays its own.
#ifndef TENSORWEAVE_SRC_BASE_LOGGING_H_
#define TENSORWEAVE_SRC_BASE_LOGGING_H_

#include "spdlog/spdlog.h"

namespace tw {

// The "tensorweave" logger (stderr, colour on a terminal), created on first use.
// Thread-safe.
spdlog::logger& Log();

}  // namespace tw

#endif  // TENSORWEAVE_SRC_BASE_LOGGING_H_
