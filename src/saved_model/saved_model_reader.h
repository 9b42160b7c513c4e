// Reading a SavedModel directory: saved_model.pb (or saved_model.pbtxt) and the
// MetaGraphDef of a tag set. Everything read is checked: a missing or corrupt file is an
// error naming it, never a crash. Thread-safe: pure functions.
#ifndef TENSORWEAVE_SRC_SAVED_MODEL_SAVED_MODEL_READER_H_
#define TENSORWEAVE_SRC_SAVED_MODEL_SAVED_MODEL_READER_H_

#include <string>
#include <vector>

#include "tensorweave/protobuf/saved_model.pb.h"
#include "tensorweave/status.h"

namespace tw::saved_model {

// The MetaGraphDef of `export_dir` whose tags are the set `tags`. NotFound when the
// directory has no saved_model.pb(txt), or no MetaGraphDef of those tags (TensorFlow's
// message, listing the tag sets there are); DataLoss for a file that does not parse.
StatusOr<tfproto::MetaGraphDef> ReadMetaGraph(const std::string& export_dir,
                                              const std::vector<std::string>& tags);

}  // namespace tw::saved_model

#endif  // TENSORWEAVE_SRC_SAVED_MODEL_SAVED_MODEL_READER_H_
