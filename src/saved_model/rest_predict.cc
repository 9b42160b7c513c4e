#include "src/saved_model/rest_predict.h"

#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace tw::saved_model {
namespace {

using json = nlohmann::json;

RestResponse Error(int http_status, const std::string& message) {
  return {http_status,
          json{{"error", message}}.dump(-1, ' ', false, json::error_handler_t::replace)};
}

// Collects the leaves of a nested JSON list and its (rectangular) shape.
Status Flatten(const json& v, size_t depth, std::vector<int64_t>* shape,
               std::vector<const json*>* leaves, const std::string& what) {
  if (v.is_array()) {
    if (depth == shape->size() && leaves->empty()) {
      shape->push_back(static_cast<int64_t>(v.size()));
    } else if (depth >= shape->size() || (*shape)[depth] != static_cast<int64_t>(v.size())) {
      return errors::InvalidArgument(what,
                                     " is a ragged list: its lists must be of equal "
                                     "length at each depth");
    }
    for (const json& e : v) TW_RETURN_IF_ERROR(Flatten(e, depth + 1, shape, leaves, what));
    return OkStatus();
  }
  if (depth != shape->size()) {
    return errors::InvalidArgument(what, " mixes values and lists at one depth");
  }
  leaves->push_back(&v);
  return OkStatus();
}

template <typename T>
Status Fill(const std::vector<const json*>& leaves, Tensor* t, const std::string& what) {
  auto flat = t->flat<T>();
  for (size_t i = 0; i < leaves.size(); ++i) {
    const json& v = *leaves[i];
    if constexpr (std::is_same_v<T, bool>) {
      if (!v.is_boolean()) return errors::InvalidArgument(what, " needs booleans, got ", v.dump());
      flat[i] = v.get<bool>();
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (v.is_string()) {
        flat[i] = v.get<std::string>();
      } else if (v.is_object() && v.size() == 1 && v.contains("b64") && v["b64"].is_string()) {
        if (!absl::Base64Unescape(v["b64"].get<std::string>(), &flat[i])) {
          return errors::InvalidArgument(what, " has a \"b64\" value that is not base64");
        }
      } else {
        return errors::InvalidArgument(what, " needs strings (or {\"b64\": ...}), got ", v.dump());
      }
    } else if constexpr (std::is_integral_v<T>) {
      if (!v.is_number_integer()) {
        return errors::InvalidArgument(what, " needs integers, got ", v.dump());
      }
      flat[i] = v.get<T>();
    } else {
      if (!v.is_number()) return errors::InvalidArgument(what, " needs numbers, got ", v.dump());
      flat[i] = v.get<T>();
    }
  }
  return OkStatus();
}

// The tensor of `dtype` that the JSON value `v` holds.
StatusOr<Tensor> ToTensor(const json& v, DataType dtype, const std::string& what) {
  std::vector<int64_t> shape;
  std::vector<const json*> leaves;
  TW_RETURN_IF_ERROR(Flatten(v, 0, &shape, &leaves, what));
  TW_ASSIGN_OR_RETURN(TensorShape dims, TensorShape::Create(shape));
  TW_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(dtype, dims));
  switch (dtype) {
    case DT_FLOAT:
      TW_RETURN_IF_ERROR(Fill<float>(leaves, &t, what));
      break;
    case DT_DOUBLE:
      TW_RETURN_IF_ERROR(Fill<double>(leaves, &t, what));
      break;
    case DT_INT32:
      TW_RETURN_IF_ERROR(Fill<int32_t>(leaves, &t, what));
      break;
    case DT_INT64:
      TW_RETURN_IF_ERROR(Fill<int64_t>(leaves, &t, what));
      break;
    case DT_BOOL:
      TW_RETURN_IF_ERROR(Fill<bool>(leaves, &t, what));
      break;
    case DT_STRING:
      TW_RETURN_IF_ERROR(Fill<std::string>(leaves, &t, what));
      break;
    default:
      return errors::Unimplemented(what, ": inputs of ", DataTypeName(dtype),
                                   " are not taken by the REST API here");
  }
  return t;
}

template <typename T>
json Element(const Tensor& t, int64_t i) {
  return json(t.flat<T>()[i]);
}

// The rows [offset, offset + count) of dimension `d` of `t` (from flat index `base`) as
// nested JSON lists.
json ToJson(const Tensor& t, int d, int64_t base) {
  if (d == t.rank()) {
    switch (t.dtype()) {
      case DT_FLOAT:
        return Element<float>(t, base);
      case DT_DOUBLE:
        return Element<double>(t, base);
      case DT_INT32:
        return Element<int32_t>(t, base);
      case DT_INT64:
        return Element<int64_t>(t, base);
      case DT_BOOL:
        return Element<bool>(t, base);
      case DT_STRING:
        return Element<std::string>(t, base);
      case DT_UINT8:
        return json(static_cast<int>(t.flat<uint8_t>()[base]));
      default:
        return json(nullptr);
    }
  }
  int64_t stride = 1;
  for (int k = d + 1; k < t.rank(); ++k) stride *= t.dim(k);
  json out = json::array();
  for (int64_t i = 0; i < t.dim(d); ++i) out.push_back(ToJson(t, d + 1, base + i * stride));
  return out;
}

}  // namespace

RestResponse RestPredictor::Status() const {
  json version = {{"version", std::to_string(version_)},
                  {"state", "AVAILABLE"},
                  {"status", {{"error_code", "OK"}, {"error_message", ""}}}};
  return {200, json{{"model_version_status", json::array({version})}}.dump()};
}

RestResponse RestPredictor::Predict(std::string_view body) const {
  const json request = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (request.is_discarded() || !request.is_object()) {
    return Error(400, "the request body is not a JSON object");
  }
  std::string signature_name = kDefaultServingSignatureDefKey;
  if (request.contains("signature_name")) {
    if (!request["signature_name"].is_string()) {
      return Error(400, "\"signature_name\" must be a string");
    }
    signature_name = request["signature_name"].get<std::string>();
  }
  const auto& signatures = bundle_->meta_graph.signature_def();
  auto found = signatures.find(signature_name);
  if (found == signatures.end()) {
    return Error(400, absl::StrCat("Serving signature name: \"", signature_name,
                                   "\" not found in signature def"));
  }
  const tfproto::SignatureDef& sig = found->second;
  const bool rows = request.contains("instances");
  if (rows == request.contains("inputs")) {
    return Error(400,
                 "the request needs exactly one of \"instances\" (rows) and \"inputs\" "
                 "(columns)");
  }
  // Each input's JSON value, batched along a new first dimension for rows.
  std::map<std::string, json> values;
  if (rows) {
    const json& instances = request["instances"];
    if (!instances.is_array() || instances.empty()) {
      return Error(400, "\"instances\" must be a non-empty list");
    }
    for (size_t i = 0; i < instances.size(); ++i) {
      const json& instance = instances[i];
      const bool named = instance.is_object() && !instance.contains("b64");
      if (!named && sig.inputs_size() != 1) {
        return Error(400, absl::StrCat("instance ", i,
                                       " must be an object naming the "
                                       "signature's ",
                                       sig.inputs_size(), " inputs"));
      }
      for (const auto& [name, info] : sig.inputs()) {
        if (named && !instance.contains(name)) {
          return Error(400, absl::StrCat("instance ", i, " has no input \"", name, "\""));
        }
        values[name].push_back(named ? instance[name] : instance);
      }
    }
  } else {
    const json& inputs = request["inputs"];
    const bool named = inputs.is_object() && !inputs.contains("b64");
    if (!named && sig.inputs_size() != 1) {
      return Error(400, absl::StrCat("\"inputs\" must be an object naming the signature's ",
                                     sig.inputs_size(), " inputs"));
    }
    for (const auto& [name, info] : sig.inputs()) {
      if (named && !inputs.contains(name)) {
        return Error(400, absl::StrCat("\"inputs\" has no input \"", name, "\""));
      }
      values[name] = named ? inputs[name] : inputs;
    }
  }
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const auto& [name, info] : sig.inputs()) {
    auto tensor = ToTensor(values[name], static_cast<DataType>(info.dtype()),
                           absl::StrCat("input \"", name, "\""));
    if (!tensor.ok()) return Error(400, std::string(tensor.status().message()));
    feeds.emplace_back(info.name(), *std::move(tensor));
  }
  std::vector<std::string> keys, fetches;
  for (const auto& [key, info] : sig.outputs()) {
    keys.push_back(key);
    fetches.push_back(info.name());
  }
  std::vector<Tensor> outputs;
  if (tw::Status s = bundle_->session->Run(feeds, fetches, {}, &outputs); !s.ok()) {
    return Error(IsInvalidArgument(s) ? 400 : 500, std::string(s.message()));
  }
  json response;
  if (!rows) {
    if (keys.size() == 1) {
      response["outputs"] = ToJson(outputs[0], 0, 0);
    } else {
      for (size_t k = 0; k < keys.size(); ++k)
        response["outputs"][keys[k]] = ToJson(outputs[k], 0, 0);
    }
  } else {
    const int64_t batch = outputs.empty() || outputs[0].rank() == 0 ? 0 : outputs[0].dim(0);
    for (size_t k = 0; k < outputs.size(); ++k) {
      if (outputs[k].rank() == 0 || outputs[k].dim(0) != batch) {
        return Error(400, absl::StrCat("output \"", keys[k],
                                       "\" does not have the batch "
                                       "size of the others, so it cannot be given per "
                                       "instance: use the \"inputs\" format"));
      }
    }
    json predictions = json::array();
    for (int64_t i = 0; i < batch; ++i) {
      json row;
      for (size_t k = 0; k < outputs.size(); ++k) {
        int64_t stride = 1;
        for (int d = 1; d < outputs[k].rank(); ++d) stride *= outputs[k].dim(d);
        json value = ToJson(outputs[k], 1, i * stride);
        if (keys.size() == 1) {
          row = std::move(value);
        } else {
          row[keys[k]] = std::move(value);
        }
      }
      predictions.push_back(std::move(row));
    }
    response["predictions"] = std::move(predictions);
  }
  return {200, response.dump(-1, ' ', false, json::error_handler_t::replace)};
}

}  // namespace tw::saved_model
