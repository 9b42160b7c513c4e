// Fuzzes the fast Example reader (src/ops/example_wire.h): for any bytes, its verdict and
// the values it reads must be the message parser's, exactly; a difference traps.
#include <cstddef>
#include <cstdint>
#include <string>

#include "src/ops/example_wire_test_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tw::example_wire;
  static const std::vector<std::string> kKeys = {"image_raw", "label", "a", "", "a"};
  const std::string record(reinterpret_cast<const char*>(data), size);
  ExampleParser parser(kKeys);
  auto want = testing::ByMessage(record, kKeys);
  auto got = testing::ByWire(parser, record);
  if (got.has_value() != want.has_value()) __builtin_trap();
  if (want) {
    for (size_t i = 0; i < kKeys.size(); ++i) {
      if (!testing::Same((*got)[i], (*want)[i])) __builtin_trap();
    }
  }
  return 0;
}
