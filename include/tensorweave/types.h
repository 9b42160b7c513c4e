// DataType: the element types a tensor can hold, with their names and sizes.
#ifndef TENSORWEAVE_TYPES_H_
#define TENSORWEAVE_TYPES_H_

#include <complex>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "tensorweave/status.h"

namespace tw {

// Numbers are stable: they are the wire values of tw.proto.DataType, and TensorFlow's
// (tensorflow/core/framework/types.proto), so a graph or tensor of TF's reads unchanged.
enum DataType : int {
  DT_INVALID = 0,
  DT_FLOAT = 1,
  DT_DOUBLE = 2,
  DT_INT32 = 3,
  DT_UINT8 = 4,
  DT_INT16 = 5,
  DT_INT8 = 6,
  DT_STRING = 7,
  DT_COMPLEX64 = 8,  // std::complex<float>
  DT_INT64 = 9,
  DT_BOOL = 10,
  DT_UINT16 = 17,
  DT_COMPLEX128 = 18,  // std::complex<double>
  DT_RESOURCE = 20,    // elements are ResourceHandle
};

// Names a resource (a variable, a queue) held by a device's resource manager. Tensors of
// DT_RESOURCE carry these from the op that creates a resource to the ops that use it.
struct ResourceHandle {
  std::string device;     // full device name, e.g. /job:ps/replica:0/task:0/device:CPU:0
  std::string container;  // resource manager container; the device's job by default
  std::string name;       // unique within the container and type
  std::string type;       // "Variable", "FIFOQueue", ...

  std::string DebugString() const { return device + ";" + container + ";" + type + ";" + name; }
  friend bool operator==(const ResourceHandle&, const ResourceHandle&) = default;
};

// The name TensorFlow prints: "float", "double", "int32", "int64", "uint8", "int8", "int16",
// "uint16", "complex64", "complex128", "bool", "string", "resource"; "invalid" otherwise.
std::string_view DataTypeName(DataType dtype);

// Parses a name as DataTypeName prints it (also "float32" and "float64").
// InvalidArgument naming the text when it is no data type.
StatusOr<DataType> DataTypeFromName(std::string_view name);

// True for the data types listed above except DT_INVALID.
bool IsValidDataType(int value);

// Bytes per element for numeric types; the object size for string and resource; 0 if invalid.
size_t DataTypeSize(DataType dtype);

// True when elements are plain bytes that can be memcpy'd (numeric types and bool).
inline bool DataTypeIsTrivial(DataType dtype) {
  return dtype != DT_STRING && dtype != DT_RESOURCE && dtype != DT_INVALID;
}

// Maps a C++ element type to its DataType: DataTypeToEnum<float>::value == DT_FLOAT.
template <typename T>
struct DataTypeToEnum;
#define TW_MATCH_TYPE_AND_ENUM(TYPE, ENUM)  \
  template <>                               \
  struct DataTypeToEnum<TYPE> {             \
    static constexpr DataType value = ENUM; \
  };
TW_MATCH_TYPE_AND_ENUM(float, DT_FLOAT)
TW_MATCH_TYPE_AND_ENUM(double, DT_DOUBLE)
TW_MATCH_TYPE_AND_ENUM(int32_t, DT_INT32)
TW_MATCH_TYPE_AND_ENUM(int64_t, DT_INT64)
TW_MATCH_TYPE_AND_ENUM(uint8_t, DT_UINT8)
TW_MATCH_TYPE_AND_ENUM(int8_t, DT_INT8)
TW_MATCH_TYPE_AND_ENUM(int16_t, DT_INT16)
TW_MATCH_TYPE_AND_ENUM(uint16_t, DT_UINT16)
TW_MATCH_TYPE_AND_ENUM(std::complex<float>, DT_COMPLEX64)
TW_MATCH_TYPE_AND_ENUM(std::complex<double>, DT_COMPLEX128)
TW_MATCH_TYPE_AND_ENUM(bool, DT_BOOL)
TW_MATCH_TYPE_AND_ENUM(std::string, DT_STRING)
TW_MATCH_TYPE_AND_ENUM(ResourceHandle, DT_RESOURCE)
#undef TW_MATCH_TYPE_AND_ENUM

}  // namespace tw

#endif  // TENSORWEAVE_TYPES_H_
