#include "tensorweave/types.h"

namespace tw {

std::string_view DataTypeName(DataType dtype) {
  switch (dtype) {
    case DT_FLOAT:
      return "float";
    case DT_DOUBLE:
      return "double";
    case DT_INT32:
      return "int32";
    case DT_UINT8:
      return "uint8";
    case DT_STRING:
      return "string";
    case DT_INT64:
      return "int64";
    case DT_BOOL:
      return "bool";
    case DT_RESOURCE:
      return "resource";
    case DT_INVALID:
      break;
  }
  return "invalid";
}

StatusOr<DataType> DataTypeFromName(std::string_view name) {
  for (DataType t :
       {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_UINT8, DT_STRING, DT_INT64, DT_BOOL, DT_RESOURCE}) {
    if (name == DataTypeName(t)) return t;
  }
  if (name == "float32") return DT_FLOAT;
  if (name == "float64") return DT_DOUBLE;
  return errors::InvalidArgument("unknown data type \"", name,
                                 "\"; expected one of float, double, int32, int64, uint8, "
                                 "bool, string, resource");
}

bool IsValidDataType(int value) {
  switch (value) {
    case DT_FLOAT:
    case DT_DOUBLE:
    case DT_INT32:
    case DT_UINT8:
    case DT_STRING:
    case DT_INT64:
    case DT_BOOL:
    case DT_RESOURCE:
      return true;
    default:
      return false;
  }
}

size_t DataTypeSize(DataType dtype) {
  switch (dtype) {
    case DT_FLOAT:
      return sizeof(float);
    case DT_DOUBLE:
      return sizeof(double);
    case DT_INT32:
      return sizeof(int32_t);
    case DT_UINT8:
      return sizeof(uint8_t);
    case DT_STRING:
      return sizeof(std::string);
    case DT_INT64:
      return sizeof(int64_t);
    case DT_BOOL:
      return sizeof(bool);
    case DT_RESOURCE:
      return sizeof(ResourceHandle);
    case DT_INVALID:
      break;
  }
  return 0;
}

}  // namespace tw
