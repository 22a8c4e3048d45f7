# `cmake --install`: headers, the engine library, the CLI, packaged tables,
# and a package config so a trainer's CMakeLists can
#   find_package(tunelock) and link tunelock::engine.
include(CMakePackageConfigHelpers)

set_target_properties(tunelock_engine PROPERTIES EXPORT_NAME engine)
install(TARGETS tunelock_engine EXPORT tunelockTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/engine/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS tunelock RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/tables/ DESTINATION ${CMAKE_INSTALL_DATADIR}/tunelock/tables
  FILES_MATCHING PATTERN "*.json" PATTERN "*.tlb")

set(config_dir ${CMAKE_INSTALL_LIBDIR}/cmake/tunelock)
install(EXPORT tunelockTargets NAMESPACE tunelock:: DESTINATION ${config_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tunelockConfig.cmake.in
  ${PROJECT_BINARY_DIR}/tunelockConfig.cmake INSTALL_DESTINATION ${config_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tunelockConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tunelockConfig.cmake
  ${PROJECT_BINARY_DIR}/tunelockConfigVersion.cmake DESTINATION ${config_dir})
