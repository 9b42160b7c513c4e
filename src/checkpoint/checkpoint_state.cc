#include "src/checkpoint/checkpoint_state.h"

#include <optional>

#include "src/base/strings.h"
#include "src/checkpoint/checkpoint_file.h"

namespace tw::checkpoint {
namespace {

constexpr uint64_t kMaxStateBytes = uint64_t{1} << 20;

std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out.push_back(c);
  }
  return out + "\"";
}

// The string of a `"..."` value, or nullopt when malformed.
std::optional<std::string> Unquote(std::string_view v) {
  if (v.size() < 2 || v.front() != '"' || v.back() != '"') return std::nullopt;
  std::string out;
  for (size_t i = 1; i + 1 < v.size(); ++i) {
    char c = v[i];
    if (c == '"') return std::nullopt;
    if (c == '\\') {
      if (i + 2 >= v.size()) return std::nullopt;
      c = v[++i];
      if (c == 'n') {
        c = '\n';
      } else if (c != '"' && c != '\\' && c != '\'') {
        return std::nullopt;
      }
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace

StatusOr<CheckpointState> ParseCheckpointState(std::string_view text, const std::string& file) {
  CheckpointState state;
  int line_number = 0;
  for (std::string_view line : Split(text, '\n')) {
    ++line_number;
    line = StripWhitespace(line);
    if (line.empty() || line.starts_with("#")) continue;
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) {
      return errors::DataLoss("checkpoint state file ", file, " line ", line_number,
                              ": no ':' in \"", line, "\"");
    }
    const std::string_view key = StripWhitespace(line.substr(0, colon));
    if (key != "model_checkpoint_path" && key != "all_model_checkpoint_paths") continue;
    std::optional<std::string> value = Unquote(StripWhitespace(line.substr(colon + 1)));
    if (!value || value->empty()) {
      return errors::DataLoss("checkpoint state file ", file, " line ", line_number, ": ", key,
                              " is not a non-empty quoted string");
    }
    if (key == "model_checkpoint_path") {
      state.model_checkpoint_path = *std::move(value);
    } else {
      state.all_model_checkpoint_paths.push_back(*std::move(value));
    }
  }
  return state;
}

std::string FormatCheckpointState(const CheckpointState& state) {
  std::string out = "model_checkpoint_path: " + Quote(state.model_checkpoint_path) + "\n";
  for (const std::string& p : state.all_model_checkpoint_paths) {
    out += "all_model_checkpoint_paths: " + Quote(p) + "\n";
  }
  return out;
}

StatusOr<CheckpointState> ReadCheckpointState(const std::string& dir) {
  const std::string file = dir + "/" + kStateFileName;
  TW_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(file, kMaxStateBytes));
  return ParseCheckpointState(text, file);
}

Status WriteCheckpointState(const std::string& dir, const CheckpointState& state) {
  // One saver (the chief's) writes the state file; a temporary one of another process was
  // left by a save killed while writing it.
  RemoveStaleTempFiles(dir,
                       [](std::string_view final_name) { return final_name == kStateFileName; });
  return WriteFileAtomically(dir + "/" + kStateFileName, FormatCheckpointState(state));
}

}  // namespace tw::checkpoint
