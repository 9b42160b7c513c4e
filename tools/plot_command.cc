// `tw plot LOGDIR... [--out FILE.png]`: the scalar curves of one or several training runs
// (loss, accuracy, steps per second: whatever scalars their event files hold), one panel
// per tag and one line per run, drawn by Debian's matplotlib into a PNG for a person to
// look at. The event files are read here (src/summary/event_file_reader.h); Python only
// draws (tools/plot_curves.py).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "src/summary/event_file_reader.h"
#include "tools/commands.h"

namespace tw::tools {
namespace {

namespace fs = std::filesystem;

// The drawing script (tools/plot_curves.py), at TW_PLOT_SCRIPT relative to the directory of
// the running `tw`: tools/CMakeLists.txt places it so in the build tree and in an
// installed prefix, so either finds its own copy.
StatusOr<std::string> DrawScript() {
  std::error_code ec;
  const fs::path tw = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return errors::Internal("cannot find the tw executable: ", ec.message());
  const fs::path script = (tw.parent_path() / TW_PLOT_SCRIPT).lexically_normal();
  if (!fs::is_regular_file(script, ec)) {
    return errors::NotFound("the drawing script is missing: ", script.string());
  }
  return script.string();
}

// A run's scalar points by tag. A SessionLog START at step s drops the points read
// before it from step s on, as TensorBoard does: a run restarted from a checkpoint repeats
// those steps.
using Points = std::vector<std::pair<int64_t, double>>;
Status ReadRun(const std::string& dir, std::map<std::string, Points>* tags) {
  TW_ASSIGN_OR_RETURN(std::vector<std::string> files, summary::ListEventFiles(dir));
  for (const std::string& file : files) {
    TW_ASSIGN_OR_RETURN(auto reader, summary::EventFileReader::Open(file));
    while (true) {
      auto event = reader->Next();
      if (IsOutOfRange(event.status())) break;
      if (!event.ok()) {
        // A run still being written may end in a torn record: keep what came before.
        std::cerr << "tw plot: " << event.status().message() << "; using the events before it\n";
        break;
      }
      if (event->has_session_log() && event->session_log().status() == proto::SessionLog::START) {
        for (auto& [tag, points] : *tags) {
          std::erase_if(points, [&](const auto& p) { return p.first >= event->step(); });
        }
      }
      if (!event->has_summary()) continue;
      for (const auto& value : event->summary().value()) {
        if (value.value_case() == proto::Summary::Value::kSimpleValue) {
          (*tags)[value.tag()].emplace_back(event->step(), value.simple_value());
        }
      }
    }
  }
  return OkStatus();
}

// The runs under `logdir`: itself when it holds event files, else each subdirectory that
// does (TensorBoard's layout for comparing runs), named by its path below `logdir`.
StatusOr<std::vector<std::pair<std::string, std::string>>> FindRuns(const std::string& logdir) {
  std::error_code ec;
  if (!fs::is_directory(logdir, ec)) {
    return errors::NotFound("no such log directory: ", logdir);
  }
  std::vector<std::pair<std::string, std::string>> runs;  // name, directory
  auto here = summary::ListEventFiles(logdir);
  if (here.ok() && !here->empty()) {
    runs.emplace_back(fs::path(logdir).lexically_normal().filename().string(), logdir);
    if (runs.back().first.empty()) runs.back().first = logdir;
    return runs;
  }
  for (auto it = fs::recursive_directory_iterator(logdir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (!it->is_directory(ec)) continue;
    auto files = summary::ListEventFiles(it->path().string());
    if (files.ok() && !files->empty()) {
      runs.emplace_back(fs::relative(it->path(), logdir, ec).string(), it->path().string());
    }
  }
  if (runs.empty()) return errors::NotFound("no event files in ", logdir, " or below it");
  return runs;
}

int Plot(const std::vector<std::string>& logdirs, std::string out) {
  nlohmann::json curves = nlohmann::json::object();
  std::set<std::string> run_names;
  int runs_read = 0;
  for (const std::string& logdir : logdirs) {
    auto runs = FindRuns(logdir);
    if (!runs.ok()) {
      std::cerr << "tw plot: " << runs.status().message() << "\n";
      return 1;
    }
    for (const auto& [name, dir] : *runs) {
      std::map<std::string, Points> tags;
      if (Status s = ReadRun(dir, &tags); !s.ok()) {
        std::cerr << "tw plot: " << s.message() << "\n";
        return 1;
      }
      // Two log directories with runs of one name: the later one is told apart by its path.
      const std::string run = run_names.insert(name).second ? name : dir;
      run_names.insert(run);
      for (const auto& [tag, points] : tags) {
        if (points.empty()) continue;
        nlohmann::json& line = curves[tag][run];
        for (const auto& [step, value] : points) line.push_back({step, value});
      }
      ++runs_read;
    }
  }
  if (curves.empty()) {
    std::cerr << "tw plot: the event files hold no scalar summaries\n";
    return 1;
  }
  if (out.empty()) out = (fs::path(logdirs[0]) / "curves.png").string();
  auto script = DrawScript();
  if (!script.ok()) {
    std::cerr << "tw plot: " << script.status().message() << "\n";
    return 1;
  }
  char json_path[] = "/tmp/tw_plot_XXXXXX";
  const int fd = mkstemp(json_path);
  if (fd < 0) {
    std::cerr << "tw plot: cannot make a temporary file in /tmp\n";
    return 1;
  }
  close(fd);
  std::ofstream(json_path) << curves.dump();
  // No shell between: the paths reach Python as they are.
  const std::string command = "/usr/bin/python3";
  std::vector<std::string> argv = {command, *script, json_path, out};
  std::vector<char*> args;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  int status = -1;
  const pid_t child = fork();
  if (child == 0) {
    execv(command.c_str(), args.data());
    _exit(127);
  }
  if (child > 0) waitpid(child, &status, 0);
  unlink(json_path);
  if (child < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::cerr << "tw plot: drawing failed; it needs /usr/bin/python3 with matplotlib (Debian's "
                 "python3-matplotlib, which scripts/setup.sh installs)\n";
    return 1;
  }
  std::cout << "tw plot: wrote " << out << " (" << curves.size() << " tags, " << runs_read
            << (runs_read == 1 ? " run)" : " runs)") << "\n";
  return 0;
}

}  // namespace

void AddPlotCommand(CLI::App& app, int* exit_code) {
  auto logdirs = std::make_shared<std::vector<std::string>>();
  auto out = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "plot", "Draw the training curves (scalar summaries) of one or several runs into a PNG");
  cmd->add_option("logdir", *logdirs,
                  "Log directories: one with event files is a run; one whose subdirectories "
                  "hold them is a run per subdirectory")
      ->required();
  cmd->add_option("--out", *out, "The PNG to write (default: LOGDIR/curves.png)")
      ->type_name("FILE.png");
  cmd->footer(
      "Example:\n  tw launch --cluster ps=1,worker=2 -- mnist_ps --checkpoint_dir=/tmp/run1\n"
      "  tw plot /tmp/run1 --out curves.png");
  cmd->callback([=] { *exit_code = Plot(*logdirs, *out); });
}

}  // namespace tw::tools
