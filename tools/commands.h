// The subcommands of the `tw` tool. Each Add*Command registers its options on `app` and
// sets `*exit_code` when it runs: 0 on success, 1 for bad input (TFJob's ExitCode restart
// policy treats 1-127 as permanent failures).
#ifndef TENSORWEAVE_TOOLS_COMMANDS_H_
#define TENSORWEAVE_TOOLS_COMMANDS_H_

#include <string>
#include <vector>

#include "CLI/CLI.hpp"

namespace tw::tools {

void AddClusterCommand(CLI::App& app, int* exit_code);
void AddConfigCommand(CLI::App& app, int* exit_code);
void AddGraphCommand(CLI::App& app, int* exit_code);
void AddK8sCommand(CLI::App& app, int* exit_code);
void AddLaunchCommand(CLI::App& app, int* exit_code);
void AddPlotCommand(CLI::App& app, int* exit_code);
void AddServeCommand(CLI::App& app, int* exit_code);
void AddServerCommand(CLI::App& app, int* exit_code);
void AddTopCommand(CLI::App& app, int* exit_code);

// The words after the first "--" of tw's command line, exactly as given: the program a
// command runs and its arguments. main takes them out before CLI11 parses the rest, since
// CLI11 would read an argument such as "[64,32]" as a list of two words and "[]" as none.
struct ProgramWords {
  bool given = false;  // the command line had a "--"
  std::vector<std::string> words;
};
// Splits argv (without argv[0]) at its first "--": the words before, for CLI11, and the
// program's words after.
ProgramWords SplitAtProgram(std::vector<std::string>* args);
// Set by main before parsing; read by the commands that run a program (launch, k8s).
void SetProgramWords(ProgramWords words);
const ProgramWords& GetProgramWords();

}  // namespace tw::tools

#endif  // TENSORWEAVE_TOOLS_COMMANDS_H_
