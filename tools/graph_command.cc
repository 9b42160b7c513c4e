// `tw graph --dot FILE.pb`: draws a GraphDef as Graphviz DOT, nodes coloured by device.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "src/graph/graph.h"
#include "tools/commands.h"

namespace tw::tools {
namespace {

struct GraphOptions {
  std::string dot_input;
  std::string out;
};

Status WriteDot(const GraphOptions& opt) {
  // A directory opens as a stream and reads as zero bytes, which parse as an empty
  // GraphDef: refuse anything but a regular file (or a pipe) before reading.
  std::error_code ec;
  const auto status = std::filesystem::status(opt.dot_input, ec);
  if (ec || !std::filesystem::exists(status))
    return errors::NotFound("cannot read ", opt.dot_input);
  if (std::filesystem::is_directory(status)) {
    return errors::InvalidArgument(opt.dot_input, " is a directory, not a GraphDef file");
  }
  std::ifstream in(opt.dot_input, std::ios::binary);
  if (!in) return errors::NotFound("cannot read ", opt.dot_input);
  std::stringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) return errors::DataLoss("cannot read ", opt.dot_input);
  proto::GraphDef graph;
  if (!graph.ParseFromString(bytes.str())) {
    return errors::InvalidArgument(opt.dot_input, " is not a binary GraphDef");
  }
  const std::string dot = GraphToDot(graph);
  if (opt.out.empty()) {
    std::cout << dot;
    return OkStatus();
  }
  std::ofstream out(opt.out, std::ios::trunc);
  out << dot;
  out.close();
  if (!out) return errors::PermissionDenied("cannot write ", opt.out);
  return OkStatus();
}

}  // namespace

void AddGraphCommand(CLI::App& app, int* exit_code) {
  auto opt = std::make_shared<GraphOptions>();
  CLI::App* cmd = app.add_subcommand("graph", "Draw a GraphDef as Graphviz DOT");
  cmd->add_option("--dot", opt->dot_input, "A binary GraphDef file (e.g. written by a program)")
      ->required();
  cmd->add_option("--out", opt->out, "Write the DOT here instead of stdout");
  cmd->footer("Example:\n  tw graph --dot model.pb | dot -Tpng > model.png");
  cmd->callback([opt, exit_code] {
    Status s = WriteDot(*opt);
    if (!s.ok()) {
      std::cerr << "tw graph: " << s.message() << "\n";
      *exit_code = 1;
    }
  });
}

}  // namespace tw::tools
