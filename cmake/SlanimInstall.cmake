# Installation: every module's headers and static library, the C API's shared library
# libslanim.so.0 (runtime/capi), the slanim command, a CMake package
# (find_package(slanim [COMPONENTS core formats appearance puppetry ik runtime capi net shared])
# → slanim::<module>, slanim::shared for libslanim.so, plus the umbrella slanim::engine) and
# pkg-config files: slanim-<module>.pc per static library, slanim.pc for the C API in
# libslanim.so (C or C++ hosts: -lslanim, no -std flag) and slanim-all.pc for every static
# module (C++20).
include(CMakePackageConfigHelpers)

get_property(slanim_modules GLOBAL PROPERTY SLANIM_INSTALLED_MODULES)
file(RELATIVE_PATH SLANIM_PC_TO_PREFIX "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
set(slanim_module_targets "")
foreach(module IN LISTS slanim_modules)
  list(APPEND slanim_module_targets slanim_${module})
  get_property(dir GLOBAL PROPERTY SLANIM_MODULE_DIR_${module})
  install(DIRECTORY ${dir}/include/slanim DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  get_property(SLANIM_PC_REQUIRES GLOBAL PROPERTY SLANIM_MODULE_PC_REQUIRES_${module})
  get_property(SLANIM_PC_REQUIRES_PRIVATE GLOBAL PROPERTY SLANIM_MODULE_PC_REQUIRES_PRIVATE_${module})
  set(SLANIM_PC_MODULE ${module})
  configure_file(${PROJECT_SOURCE_DIR}/cmake/slanim-module.pc.in
                 ${PROJECT_BINARY_DIR}/pkgconfig/slanim-${module}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/slanim-${module}.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()

get_property(slanim_shared_target GLOBAL PROPERTY SLANIM_SHARED_LIBRARY)
install(TARGETS ${slanim_module_targets} slanim_engine ${slanim_shared_target} EXPORT slanimTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT slanimTargets NAMESPACE slanim::
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/slanim)
set(SLANIM_MODULES ${slanim_modules} shared)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/slanimConfig.cmake.in
  ${PROJECT_BINARY_DIR}/slanimConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/slanim)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/slanimConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/slanimConfig.cmake ${PROJECT_BINARY_DIR}/slanimConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/slanim)

list(TRANSFORM slanim_modules PREPEND "slanim-" OUTPUT_VARIABLE slanim_pc_all)
list(JOIN slanim_pc_all " " SLANIM_PC_ALL)
configure_file(${PROJECT_SOURCE_DIR}/cmake/slanim.pc.in ${PROJECT_BINARY_DIR}/pkgconfig/slanim.pc @ONLY)
configure_file(${PROJECT_SOURCE_DIR}/cmake/slanim-all.pc.in ${PROJECT_BINARY_DIR}/pkgconfig/slanim-all.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/slanim.pc ${PROJECT_BINARY_DIR}/pkgconfig/slanim-all.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
