#include "tools/launch/line_splitter.h"

namespace tw::launch {

void LineSplitter::Feed(std::string_view data, const Emit& emit) {
  while (!data.empty()) {
    const size_t newline = data.find('\n');
    const size_t take = newline == std::string_view::npos ? data.size() : newline;
    if (partial_.empty() && newline != std::string_view::npos && take <= max_line_) {
      emit(data.substr(0, take));  // the common case: a whole line, no copy
      data.remove_prefix(take + 1);
      continue;
    }
    const size_t room = max_line_ - partial_.size();
    if (take > room) {  // the line is too long: emit what fits as a line of its own
      partial_.append(data.substr(0, room));
      data.remove_prefix(room);
      emit(partial_);
      partial_.clear();
      continue;
    }
    partial_.append(data.substr(0, take));
    if (newline == std::string_view::npos) return;
    data.remove_prefix(take + 1);
    emit(partial_);
    partial_.clear();
  }
}

void LineSplitter::Finish(const Emit& emit) {
  if (partial_.empty()) return;
  emit(partial_);
  partial_.clear();
}

}  // namespace tw::launch
