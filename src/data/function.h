// DatasetFunctionRunner: runs a dataset transformation's function (map, filter) in C++,
// on the device that built the pipeline: its graph (proto::DatasetFunction) is run as a
// session of its own over that device, with the element's components and the captured
// tensors fed and the outputs fetched. The session keeps the pruned graph and its kernels
// between calls, so a call costs one step of the executor.
//
// Thread-safe: parallel map calls it from several threads.
#ifndef TENSORWEAVE_SRC_DATA_FUNCTION_H_
#define TENSORWEAVE_SRC_DATA_FUNCTION_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "src/data/dataset.h"
#include "src/runtime/direct_session.h"

namespace tw::data {

class DatasetFunctionRunner {
 public:
  // `what` names the function in errors ("map function"). InvalidArgument when the graph
  // or its argument lists are malformed, or a capture input is missing.
  static StatusOr<std::shared_ptr<DatasetFunctionRunner>> Create(
      const proto::DatasetFunction& function, const BuildContext& ctx, std::string what);

  // The outputs for the element `args` (one tensor per argument). Errors are the
  // function's kernels', prefixed with `what`.
  Status Call(const Element& args, Element* outputs) const;
  size_t num_args() const { return args_.size(); }

 private:
  DatasetFunctionRunner() = default;
  std::unique_ptr<DirectSession> session_;
  std::vector<std::string> args_;
  std::vector<std::pair<std::string, Tensor>> captures_;
  std::vector<std::string> outputs_;
  std::string what_;
};

}  // namespace tw::data

#endif  // TENSORWEAVE_SRC_DATA_FUNCTION_H_
