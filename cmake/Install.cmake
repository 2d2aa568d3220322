# cmake --install: the public library (lib/libonnx_bcast.so), its header
# (include/onnx_bcast/onnx_bcast.h), the CLI (bin/onnx-bcast) and the CMake package
# (lib/cmake/onnx_bcast) so that a converter does
#   find_package(onnx_bcast REQUIRED)
#   target_link_libraries(my_converter PRIVATE onnx_bcast::onnx_bcast)
# Included at the end of the top CMakeLists.txt; does nothing without the api/ layer.
if(NOT TARGET onnx_bcast)
  return()
endif()

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(BCAST_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/onnx_bcast)

# Installed binaries find libonnx_bcast.so beside them whatever the prefix; it finds an engine's
# shared library outside the build tree (MNN's libMNN.so in BCAST_MNN_DIR: opt runs the
# target's engine) where the build linked it from.
set_target_properties(onnx_bcast PROPERTIES INSTALL_RPATH "$ORIGIN" INSTALL_RPATH_USE_LINK_PATH ON)

install(TARGETS onnx_bcast EXPORT onnx_bcastTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/api/include/onnx_bcast/onnx_bcast.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/onnx_bcast)
if(TARGET onnx-bcast)
  # An engine's shared library outside the build tree (MNN's libMNN.so in BCAST_MNN_DIR) is
  # found, installed, where the build linked it from.
  set_target_properties(onnx-bcast PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
  install(TARGETS onnx-bcast RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

install(EXPORT onnx_bcastTargets
  NAMESPACE onnx_bcast::
  FILE onnx_bcastTargets.cmake
  DESTINATION ${BCAST_INSTALL_CMAKEDIR})
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/onnx_bcastConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/onnx_bcastConfig.cmake
  INSTALL_DESTINATION ${BCAST_INSTALL_CMAKEDIR})
# Same major.minor only: the 0.x API may change between minor versions.
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/cmake/onnx_bcastConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/cmake/onnx_bcastConfig.cmake
  ${PROJECT_BINARY_DIR}/cmake/onnx_bcastConfigVersion.cmake
  DESTINATION ${BCAST_INSTALL_CMAKEDIR})
