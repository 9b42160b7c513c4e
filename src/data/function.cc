#include "src/data/function.h"

namespace tw::data {

StatusOr<std::shared_ptr<DatasetFunctionRunner>> DatasetFunctionRunner::Create(
    const proto::DatasetFunction& function, const BuildContext& ctx, std::string what) {
  if (function.captures_size() != function.capture_inputs_size()) {
    return errors::InvalidArgument(what, ": ", function.captures_size(), " captures but ",
                                   function.capture_inputs_size(), " capture inputs");
  }
  if (function.outputs_size() == 0 && !function.has_output_dataset()) {
    return errors::InvalidArgument(what, " returns nothing");
  }
  std::shared_ptr<DatasetFunctionRunner> runner(new DatasetFunctionRunner());
  runner->what_ = std::move(what);
  runner->args_.assign(function.args().begin(), function.args().end());
  runner->outputs_.assign(function.outputs().begin(), function.outputs().end());
  for (int i = 0; i < function.captures_size(); ++i) {
    const int at = function.capture_inputs(i);
    if (ctx.inputs == nullptr || at < 0 || at >= static_cast<int>(ctx.inputs->size())) {
      return errors::InvalidArgument(runner->what_, " captures input ", at,
                                     " of the iterator op, which it does not have");
    }
    runner->captures_.emplace_back(function.captures(i), (*ctx.inputs)[at]);
  }
  // Over the building device, without owning it: the function's kernels share its pool
  // and resources, as TensorFlow's functions share their device's.
  runner->session_ = std::make_unique<DirectSession>(ctx.device, nullptr);
  Status s = runner->session_->Extend(function.graph());
  if (!s.ok()) return errors::InvalidArgument(runner->what_, ": ", s.message());
  return runner;
}

Status DatasetFunctionRunner::Call(const Element& args, Element* outputs) const {
  if (args.size() != args_.size()) {
    return errors::InvalidArgument(what_, " takes ", args_.size(), " components but got ",
                                   args.size());
  }
  std::vector<std::pair<std::string, Tensor>> feeds = captures_;
  for (size_t i = 0; i < args.size(); ++i) feeds.emplace_back(args_[i], args[i]);
  outputs->clear();
  Status s = session_->Run(feeds, outputs_, {}, outputs);
  if (!s.ok()) return Status(s.code(), what_ + ": " + std::string(s.message()));
  return OkStatus();
}

}  // namespace tw::data
