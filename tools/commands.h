// The subcommands of the `tw` tool. Each Add*Command registers its options on `app` and
// sets `*exit_code` when it runs: 0 on success, 1 for bad input (TFJob's ExitCode restart
// policy treats 1-127 as permanent failures).
#ifndef TENSORWEAVE_TOOLS_COMMANDS_H_
#define TENSORWEAVE_TOOLS_COMMANDS_H_

#include "CLI/CLI.hpp"

namespace tw::tools {

void AddClusterCommand(CLI::App& app, int* exit_code);
void AddConfigCommand(CLI::App& app, int* exit_code);
void AddGraphCommand(CLI::App& app, int* exit_code);
void AddK8sCommand(CLI::App& app, int* exit_code);
void AddLaunchCommand(CLI::App& app, int* exit_code);
void AddServerCommand(CLI::App& app, int* exit_code);

}  // namespace tw::tools

#endif  // TENSORWEAVE_TOOLS_COMMANDS_H_
