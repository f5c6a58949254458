# slanim_target_options(<target>): the project's warnings, sanitizers and float rules.
# Applied PRIVATE to every target so that nothing leaks into installed packages.
function(slanim_target_options tgt)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${tgt} PRIVATE -Wall -Wextra -Wpedantic -Wshadow
      -Wconversion -Wno-sign-conversion -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
      -Woverloaded-virtual -Wimplicit-fallthrough
      # The viewer's float results (quantization, nlerp) are reproduced bit for bit:
      # never contract a*b+c into an FMA.
      -ffp-contract=off)
    if(SLANIM_WARNINGS_AS_ERRORS)
      target_compile_options(${tgt} PRIVATE -Werror)
    endif()
    if(SLANIM_TSAN)
      target_compile_options(${tgt} PRIVATE -fsanitize=thread -fno-omit-frame-pointer)
      target_link_options(${tgt} PRIVATE -fsanitize=thread)
    endif()
    if(SLANIM_SANITIZE)
      target_compile_options(${tgt} PRIVATE -fsanitize=address,undefined
        -fno-sanitize-recover=all -fno-omit-frame-pointer)
      target_link_options(${tgt} PRIVATE -fsanitize=address,undefined)
    endif()
  endif()
endfunction()

# slanim_add_module(<name> SOURCES <src>... [PUBLIC <target>...] [PRIVATE <target>...]
#                   [PC_REQUIRES <pc>...] [PC_REQUIRES_PRIVATE <pc>...] [NO_INSTALL])
# One module = one static library `slanim_<name>` (alias and export name `slanim::<name>`) with
# its public headers in <module dir>/include/slanim/<name>/ and its code in src/. Installed
# modules are exported to the CMake package and get a pkg-config file `slanim-<name>.pc`.
function(slanim_add_module name)
  cmake_parse_arguments(M "NO_INSTALL" "" "SOURCES;PUBLIC;PRIVATE;PC_REQUIRES;PC_REQUIRES_PRIVATE" ${ARGN})
  set(tgt slanim_${name})
  add_library(${tgt} STATIC ${M_SOURCES})
  add_library(slanim::${name} ALIAS ${tgt})
  set_target_properties(${tgt} PROPERTIES OUTPUT_NAME slanim_${name} EXPORT_NAME ${name})
  target_include_directories(${tgt} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_features(${tgt} PUBLIC cxx_std_20)
  target_link_libraries(${tgt} PUBLIC ${M_PUBLIC} PRIVATE ${M_PRIVATE})
  slanim_target_options(${tgt})
  if(NOT M_NO_INSTALL)
    set_property(GLOBAL APPEND PROPERTY SLANIM_INSTALLED_MODULES ${name})
    set_property(GLOBAL PROPERTY SLANIM_MODULE_DIR_${name} ${CMAKE_CURRENT_SOURCE_DIR})
    list(JOIN M_PC_REQUIRES " " req)
    list(JOIN M_PC_REQUIRES_PRIVATE " " req_private)
    set_property(GLOBAL PROPERTY SLANIM_MODULE_PC_REQUIRES_${name} "${req}")
    set_property(GLOBAL PROPERTY SLANIM_MODULE_PC_REQUIRES_PRIVATE_${name} "${req_private}")
  endif()
endfunction()
