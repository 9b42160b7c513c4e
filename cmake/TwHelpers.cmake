# Helpers shared by every target: warnings, sanitizers, test registration.

set(TW_WARNINGS -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wno-unused-parameter
    -Wno-missing-field-initializers)
# GCC 12.2's AVX-512 intrinsics initialize undefined vectors from themselves (GCC PR 105593,
# fixed in later releases), so once Eigen is inlined with -march=native GCC reports them
# as (maybe-)uninitialized, and -Wmaybe-uninitialized also misfires on some
# StatusOr<std::string> uses. Both checks stay on in the clang builds (the sanitizer build
# in CI), whose headers do not have the problem.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  list(APPEND TW_WARNINGS -Wno-maybe-uninitialized -Wno-uninitialized)
endif()
if(TW_WERROR)
  list(APPEND TW_WARNINGS -Werror)
endif()

if(TW_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
if(TW_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "TW_FUZZ needs clang (libFuzzer)")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

# Applies the project's warnings and language level to a target we own.
function(tw_target_defaults target)
  target_compile_options(${target} PRIVATE ${TW_WARNINGS})
  target_compile_features(${target} PUBLIC cxx_std_20)
endfunction()

# tw_cc_test(NAME name SRCS a.cc... [DEPS libs...] [LABELS unit|integration])
# Builds a GoogleTest binary and registers each of its tests with ctest.
function(tw_cc_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "SRCS;DEPS;LABELS" ${ARGN})
  if(NOT TW_BUILD_TESTS)
    return()
  endif()
  if(NOT T_LABELS)
    set(T_LABELS unit)
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 60)
  endif()
  add_executable(${T_NAME} ${T_SRCS})
  tw_target_defaults(${T_NAME})
  target_link_libraries(${T_NAME} PRIVATE tw_testing GTest::gtest_main ${T_DEPS})
  target_include_directories(${T_NAME} PRIVATE ${PROJECT_SOURCE_DIR})
  gtest_discover_tests(${T_NAME}
    PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT}
    ENVIRONMENT "TW_BINARY_DIR=${PROJECT_BINARY_DIR}"
    DISCOVERY_TIMEOUT 30)
endfunction()

include(GoogleTest OPTIONAL)
