# `cmake --install`: headers, every library a trainer links, the CLI,
# packaged tables, and a package config so a trainer's CMakeLists can
#   find_package(tunelock [COMPONENTS engine launcher ucx cuda]) and link
#   tunelock::engine, tunelock::launcher, tunelock::ucx (where UCX was found)
#   or tunelock::cuda (where CUDA was).
# Each component is its own export set, so a consumer asking for the engine
# alone needs neither UCX nor the CUDA toolkit on its machine.
include(CMakePackageConfigHelpers)

set_target_properties(tunelock_engine PROPERTIES EXPORT_NAME engine)
set_target_properties(tunelock_launcher PROPERTIES EXPORT_NAME launcher)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/engine/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The UCX collective's headers go with its library, below.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/launcher/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# Optional parts are exported only where they were built; the package config
# looks up their dependencies only then (TUNELOCK_EXPORTS_* below).
set(config_dir ${CMAKE_INSTALL_LIBDIR}/cmake/tunelock)
function(tunelock_export_component target component)
  install(TARGETS ${target} EXPORT tunelock_${component}_targets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(EXPORT tunelock_${component}_targets NAMESPACE tunelock::
    FILE tunelock_${component}_targets.cmake DESTINATION ${config_dir})
endfunction()
tunelock_export_component(tunelock_engine engine)
tunelock_export_component(tunelock_launcher launcher)

set(TUNELOCK_EXPORTS_UCX OFF)
if(TARGET tunelock_ucx)
  set(TUNELOCK_EXPORTS_UCX ON)
  tunelock_export_component(tunelock_ucx ucx)
  set_target_properties(tunelock_ucx PROPERTIES EXPORT_NAME ucx)
  install(FILES ${PROJECT_SOURCE_DIR}/launcher/ucx/include/tunelock/launcher/ucx_collective.hpp
                ${PROJECT_SOURCE_DIR}/launcher/ucx/include/tunelock/launcher/rendezvous.hpp
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tunelock/launcher)
endif()
# The CUDA backend (launcher/cuda/): it installs its own headers beside its
# target; exported here once the target exists.
set(TUNELOCK_EXPORTS_CUDA OFF)
if(TARGET tunelock_cuda)
  set(TUNELOCK_EXPORTS_CUDA ON)
  tunelock_export_component(tunelock_cuda cuda)
  set_target_properties(tunelock_cuda PROPERTIES EXPORT_NAME cuda)
endif()

install(TARGETS tunelock RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# Where bash-completion loads a command's completion on first use.
install(FILES ${PROJECT_BINARY_DIR}/cli/tunelock.bash
  DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME tunelock)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/tables/ DESTINATION ${CMAKE_INSTALL_DATADIR}/tunelock/tables
  FILES_MATCHING PATTERN "*.json" PATTERN "*.tlb")

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tunelockConfig.cmake.in
  ${PROJECT_BINARY_DIR}/tunelockConfig.cmake INSTALL_DESTINATION ${config_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tunelockConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tunelockConfig.cmake
  ${PROJECT_BINARY_DIR}/tunelockConfigVersion.cmake DESTINATION ${config_dir})
