#include "tensorweave/types.h"

namespace tw {
namespace {

// Every valid type, in enum order: what DataTypeFromName tries and its error lists.
constexpr DataType kAllTypes[] = {DT_FLOAT,  DT_DOUBLE,     DT_INT32,     DT_UINT8, DT_INT16,
                                  DT_INT8,   DT_STRING,     DT_COMPLEX64, DT_INT64, DT_BOOL,
                                  DT_UINT16, DT_COMPLEX128, DT_RESOURCE};

}  // namespace

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
    case DT_INT16:
      return "int16";
    case DT_INT8:
      return "int8";
    case DT_STRING:
      return "string";
    case DT_COMPLEX64:
      return "complex64";
    case DT_INT64:
      return "int64";
    case DT_BOOL:
      return "bool";
    case DT_UINT16:
      return "uint16";
    case DT_COMPLEX128:
      return "complex128";
    case DT_RESOURCE:
      return "resource";
    case DT_INVALID:
      break;
  }
  return "invalid";
}

StatusOr<DataType> DataTypeFromName(std::string_view name) {
  for (DataType t : kAllTypes) {
    if (name == DataTypeName(t)) return t;
  }
  if (name == "float32") return DT_FLOAT;
  if (name == "float64") return DT_DOUBLE;
  std::string names;
  for (DataType t : kAllTypes) {
    if (!names.empty()) names += ", ";
    names += DataTypeName(t);
  }
  return errors::InvalidArgument("unknown data type \"", std::string(name), "\"; expected one of ",
                                 names);
}

bool IsValidDataType(int value) {
  for (DataType t : kAllTypes) {
    if (value == t) return true;
  }
  return false;
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
    case DT_INT16:
      return sizeof(int16_t);
    case DT_INT8:
      return sizeof(int8_t);
    case DT_STRING:
      return sizeof(std::string);
    case DT_COMPLEX64:
      return sizeof(std::complex<float>);
    case DT_INT64:
      return sizeof(int64_t);
    case DT_BOOL:
      return sizeof(bool);
    case DT_UINT16:
      return sizeof(uint16_t);
    case DT_COMPLEX128:
      return sizeof(std::complex<double>);
    case DT_RESOURCE:
      return sizeof(ResourceHandle);
    case DT_INVALID:
      break;
  }
  return 0;
}

}  // namespace tw
