// TF Serving's REST predict API over a loaded SavedModel, without the HTTP: `tw serve`
// (tools/serve_command.cc) puts it behind cpp-httplib.
//
//   POST /v1/models/<name>:predict   {"signature_name": "...",          (default
//                                     "instances": [...]}                serving_default)
//                                 or {"inputs": {...} | value}
//   -> 200 {"predictions": [...]}     (row format: one entry per instance; a dict per
//                                      instance when the signature has several outputs)
//      200 {"outputs": ...}           (columnar format: the tensor, or a dict of them)
//      4xx/5xx {"error": "..."}       naming the field, input or signature at fault
//
// Values are JSON numbers, booleans and strings nested as the tensor's shape (ragged lists
// are refused); {"b64": "..."} is a binary string. Types come from the signature's
// TensorInfo. Thread-safe: requests run concurrently on the bundle's session.
#ifndef TENSORWEAVE_SRC_SAVED_MODEL_REST_PREDICT_H_
#define TENSORWEAVE_SRC_SAVED_MODEL_REST_PREDICT_H_

#include <string>
#include <string_view>

#include "tensorweave/saved_model.h"

namespace tw::saved_model {

struct RestResponse {
  int http_status = 200;
  std::string body;  // JSON
};

class RestPredictor {
 public:
  // `bundle` must outlive the predictor.
  RestPredictor(const SavedModelBundle* bundle, std::string model_name, int64_t version)
      : bundle_(bundle), model_name_(std::move(model_name)), version_(version) {}

  const std::string& model_name() const { return model_name_; }

  // The body of POST /v1/models/<model_name>:predict.
  RestResponse Predict(std::string_view body) const;
  // GET /v1/models/<model_name>: TF Serving's model status (AVAILABLE).
  RestResponse Status() const;

 private:
  const SavedModelBundle* bundle_;
  std::string model_name_;
  int64_t version_;
};

}  // namespace tw::saved_model

#endif  // TENSORWEAVE_SRC_SAVED_MODEL_REST_PREDICT_H_
