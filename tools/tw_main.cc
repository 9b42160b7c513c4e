// `tw`: the tensorweave command-line tool. See `tw --help`.
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "tools/commands.h"

namespace tw::tools {
namespace {
ProgramWords& Words() {
  static ProgramWords words;
  return words;
}
}  // namespace

ProgramWords SplitAtProgram(std::vector<std::string>* args) {
  ProgramWords program;
  auto dashes = std::find(args->begin(), args->end(), "--");
  if (dashes == args->end()) return program;
  program.given = true;
  program.words.assign(dashes + 1, args->end());
  args->erase(dashes, args->end());
  return program;
}
void SetProgramWords(ProgramWords words) { Words() = std::move(words); }
const ProgramWords& GetProgramWords() { return Words(); }

}  // namespace tw::tools

int main(int argc, char** argv) {
  CLI::App app{
      "tw: tools for tensorweave clusters.\n\n"
      "  tw cluster   show how this process resolves its role (flags, TF_CONFIG)\n"
      "  tw config    write one sourceable TF_CONFIG script per task of a local cluster\n"
      "  tw graph     draw a GraphDef as Graphviz DOT\n"
      "  tw k8s       print Kubernetes manifests (a Kubeflow TFJob) for a cluster\n"
      "  tw launch    run every task of a cluster on this machine, as TFJob would\n"
      "  tw plot      draw the training curves of runs' event files into a PNG\n"
      "  tw serve     serve a SavedModel with TF Serving's REST predict API\n"
      "  tw server    run one task's server (role from flags or TF_CONFIG)\n"
      "  tw top       watch a running cluster live, from its tasks' metrics\n"};
  app.require_subcommand(1);
  app.footer("Run `tw <command> --help` for a command's flags and examples.");
  int exit_code = 0;
  tw::tools::AddClusterCommand(app, &exit_code);
  tw::tools::AddConfigCommand(app, &exit_code);
  tw::tools::AddGraphCommand(app, &exit_code);
  tw::tools::AddK8sCommand(app, &exit_code);
  tw::tools::AddLaunchCommand(app, &exit_code);
  tw::tools::AddPlotCommand(app, &exit_code);
  tw::tools::AddServeCommand(app, &exit_code);
  tw::tools::AddServerCommand(app, &exit_code);
  tw::tools::AddTopCommand(app, &exit_code);
  // CLI11 reports parse problems as exceptions; this is the one place they are turned into
  // a one-line message and exit code 1.
  std::vector<std::string> args(argv + 1, argv + argc);
  tw::tools::SetProgramWords(tw::tools::SplitAtProgram(&args));
  std::reverse(args.begin(), args.end());  // CLI11 takes a vector in reverse order
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "tw: " << e.what() << "\n";
    return 1;
  }
  return exit_code;
}
