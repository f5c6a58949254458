# Installation: headers, static libraries, the slanim command, a CMake package
# (find_package(slanim) → slanim::engine, slanim::ik, slanim::runtime) and a pkg-config file.
include(CMakePackageConfigHelpers)

install(TARGETS slanim_engine slanim_ik slanim_runtime EXPORT slanimTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
foreach(module engine ik runtime)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${module}/include/slanim
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endforeach()

install(EXPORT slanimTargets NAMESPACE slanim::
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/slanim)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/slanimConfig.cmake.in
  ${PROJECT_BINARY_DIR}/slanimConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/slanim)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/slanimConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/slanimConfig.cmake ${PROJECT_BINARY_DIR}/slanimConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/slanim)

configure_file(${PROJECT_SOURCE_DIR}/cmake/slanim.pc.in ${PROJECT_BINARY_DIR}/slanim.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/slanim.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
