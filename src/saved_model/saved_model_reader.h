// Reading a SavedModel directory: saved_model.pb (or saved_model.pbtxt) and the
// MetaGraphDef of a tag set. Everything read is checked: a missing or corrupt file is an
// error naming it, never a crash. Thread-safe: pure functions.
#ifndef TENSORWEAVE_SRC_SAVED_MODEL_SAVED_MODEL_READER_H_
#define TENSORWEAVE_SRC_SAVED_MODEL_SAVED_MODEL_READER_H_

#include <string>
#include <utility>
#include <vector>

#include "tensorweave/protobuf/saved_model.pb.h"
#include "tensorweave/status.h"

namespace tw::saved_model {

// The MetaGraphDef of `export_dir` whose tags are the set `tags`. NotFound when the
// directory has no saved_model.pb(txt), or no MetaGraphDef of those tags (TensorFlow's
// message, listing the tag sets there are); DataLoss for a file that does not parse.
StatusOr<tfproto::MetaGraphDef> ReadMetaGraph(const std::string& export_dir,
                                              const std::vector<std::string>& tags);

// One session run of a load: string feeds (tensor name, value) and the node to run.
struct LoadStep {
  std::vector<std::pair<std::string, std::string>> feeds;
  std::string target;
};

// The runs that give a loaded graph its state, as TensorFlow's loader makes them (one rule
// for the C++ loader and tf.saved_model.loader): the saver's restore op with the prefix
// <export_dir>/variables/variables fed (when the model has a saver and that checkpoint's
// index exists), then the main op, else the legacy init op, with each asset's tensor fed
// its file's place under <export_dir>/assets/.
std::vector<LoadStep> LoadSteps(const tfproto::MetaGraphDef& meta, const std::string& export_dir);

}  // namespace tw::saved_model

#endif  // TENSORWEAVE_SRC_SAVED_MODEL_SAVED_MODEL_READER_H_
