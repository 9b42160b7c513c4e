# Install rules and the CMake package config: find_package(tensorweave) then link
# tensorweave::tensorweave; the `tw` tool is installed beside it.
include(CMakePackageConfigHelpers)

install(TARGETS tensorweave tw EXPORT tensorweaveTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/tensorweave DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_BINARY_DIR}/gen/tensorweave DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.pb.h")

set(TW_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tensorweave)
install(EXPORT tensorweaveTargets NAMESPACE tensorweave:: DESTINATION ${TW_CMAKE_DIR})
configure_package_config_file(cmake/tensorweaveConfig.cmake.in
  ${PROJECT_BINARY_DIR}/tensorweaveConfig.cmake INSTALL_DESTINATION ${TW_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tensorweaveConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tensorweaveConfig.cmake
  ${PROJECT_BINARY_DIR}/tensorweaveConfigVersion.cmake DESTINATION ${TW_CMAKE_DIR})
