// The files task: reads LIST_FILE and holds its paths, in order, in the "wordcount_names"
// variable, then serves the rounds' queues (which reduce fills) until the cluster stops.
// A restarted files task reads the list again: the same file keeps the same index.
#include <stdio.h>

#include <cerrno>
#include <string>
#include <system_error>
#include <vector>

#include "examples/wordcount_state.h"
#include "examples/wordcount_tasks.h"

namespace tw::examples {
namespace {

// The non-empty lines of `list_file`, each one path (any bytes but a newline; nothing is
// trimmed).
StatusOr<std::vector<std::string>> ReadList(const std::string& list_file) {
  auto error = [&](int code) {
    return errors::FailedPrecondition("cannot read list file ", list_file, ": ",
                                      std::error_code(code, std::generic_category()).message());
  };
  FILE* list = fopen(list_file.c_str(), "rb");
  if (list == nullptr) return error(errno);
  std::vector<std::string> paths;
  char* line = nullptr;
  size_t capacity = 0;
  ssize_t length;
  while ((length = getline(&line, &capacity, list)) >= 0) {
    std::string path(line, static_cast<size_t>(length));
    if (!path.empty() && path.back() == '\n') path.pop_back();
    if (!path.empty()) paths.push_back(std::move(path));
  }
  const int read_error = ferror(list) ? errno : 0;
  free(line);
  fclose(list);
  if (read_error != 0) return error(read_error);
  return paths;
}

}  // namespace

int RunFiles(Server* server, const WordcountArgs& args) {
  StopWatch watch(server);
  auto paths = ReadList(args.list_file);
  if (!paths.ok()) {
    Complain("files: " + std::string(paths.status().message()));
    return 1;
  }
  Scope root = Scope::NewRootScope();
  SharedState shared = MakeSharedState(root);
  auto names =
      ops::Placeholder(root.WithOpName("paths"), DT_STRING, {.shape = std::vector<int64_t>{-1}});
  auto hold =
      ops::Assign(root.WithOpName("hold_names"), shared.names, names, {.validate_shape = false});
  ClientSession session(root, {.target = server->target(), .device_filters = {kFilesDevice}});
  const int64_t count = static_cast<int64_t>(paths->size());
  if (auto s = session.Run({{names, Tensor::FromVector(*paths)}}, {}, {hold.op()}); !s.ok()) {
    if (watch.stopped()) return 0;  // stopped before it began: nothing was lost
    Complain("files: " + std::string(s.status().message()));
    return 1;
  }
  Say("holds " + std::to_string(count) + " file names from " + args.list_file);
  watch.Wait();
  return 0;
}

}  // namespace tw::examples
