# cmake -DBUILD_DIR=… -DSOURCE_DIR=… -DSHARED_DIR=… -DWORK_DIR=… -DGENERATOR=… -DCXX=… -DCC=… -P check_package.cmake
# See tests/package/CMakeLists.txt.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(run_out "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

foreach(consumer core runtime c)
  set(bin ${WORK_DIR}/${consumer})
  run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/${consumer}_consumer -B ${bin} -G ${GENERATOR}
      -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_C_COMPILER=${CC}
      -DCMAKE_BUILD_TYPE=Release)
  run(${CMAKE_COMMAND} --build ${bin})
  run(${bin}/${consumer}_consumer)
  message(STATUS "${run_out}")
  if(consumer STREQUAL "core")
    # The link line of the core consumer: nothing but slanim_core and the standard library.
    run(${CMAKE_COMMAND} --build ${bin} --target clean)
    run(${CMAKE_COMMAND} --build ${bin} --verbose)
    string(REGEX MATCHALL "[^\n]*-o core_consumer[^\n]*" link_line "${run_out}")
    if(link_line STREQUAL "")
      message(FATAL_ERROR "no link line for core_consumer in:\n${run_out}")
    endif()
    message(STATUS "core consumer link line: ${link_line}")
    if(link_line MATCHES "pugixml|nlohmann|fmt|slanim_formats")
      message(FATAL_ERROR "slanim::core pulls a third-party library: ${link_line}")
    endif()
  endif()
endforeach()

# pkg-config: slanim-core names only libslanim_core; a program built with it alone links.
find_program(PKG_CONFIG pkg-config REQUIRED)
set(ENV{PKG_CONFIG_PATH} ${prefix}/lib/pkgconfig:${prefix}/lib/x86_64-linux-gnu/pkgconfig)
run(${PKG_CONFIG} --libs --static --cflags slanim-core)
string(STRIP "${run_out}" core_flags)
message(STATUS "pkg-config slanim-core: ${core_flags}")
if(core_flags MATCHES "pugixml|fmt|nlohmann" OR NOT core_flags MATCHES "-lslanim_core")
  message(FATAL_ERROR "pkg-config slanim-core: unexpected flags ${core_flags}")
endif()
separate_arguments(core_args UNIX_COMMAND "${core_flags}")
run(${CXX} ${SOURCE_DIR}/core_consumer/main.cpp -o ${WORK_DIR}/core_pc ${core_args})
run(${WORK_DIR}/core_pc)
foreach(module formats appearance puppetry ik runtime net)
  run(${PKG_CONFIG} --exists --print-errors slanim-${module})
endforeach()
run(${PKG_CONFIG} --libs --static slanim-runtime)
message(STATUS "pkg-config slanim-runtime: ${run_out}")

# pkg-config slanim: the C API in libslanim.so, for a C program with nothing but slanim.h. No
# C++ flag, no static module, no third-party library on the line.
run(${PKG_CONFIG} --cflags --libs slanim)
string(STRIP "${run_out}" c_flags)
message(STATUS "pkg-config slanim: ${c_flags}")
if(NOT c_flags MATCHES "-lslanim( |$)" OR c_flags MATCHES "c\\+\\+|slanim_|tbb|fmt|pugixml")
  message(FATAL_ERROR "pkg-config slanim: unexpected flags ${c_flags}")
endif()
run(${PKG_CONFIG} --variable=libdir slanim)
string(STRIP "${run_out}" c_libdir)
separate_arguments(c_args UNIX_COMMAND "${c_flags}")
run(${CC} -std=c99 -Wall -Wextra -Werror -pedantic ${SOURCE_DIR}/c_consumer/main.c -o ${WORK_DIR}/c_pc
    ${c_args} -Wl,-rpath,${c_libdir})
run(${WORK_DIR}/c_pc)
message(STATUS "${run_out}")
# The example host (tools/examples/c_host.c) built the same way, with `pkg-config slanim` alone,
# plays DANCE1 on 100 avatars with the procedural motions and a joint attachment override.
run(${CC} -std=c99 -Wall -Wextra -Werror -pedantic ${SOURCE_DIR}/../../tools/examples/c_host.c
    -o ${WORK_DIR}/c_host_pc ${c_args} -Wl,-rpath,${c_libdir})
if(EXISTS "${SHARED_DIR}/anims/linden/DANCE1.anim")
  run(${WORK_DIR}/c_host_pc ${SHARED_DIR}/anims/linden/DANCE1.anim)
  message(STATUS "${run_out}")
  if(NOT run_out MATCHES "mHead position override active" OR NOT run_out MATCHES "t = 1.000 s")
    message(FATAL_ERROR "c_host (pkg-config build): unexpected output\n${run_out}")
  endif()
else()
  message(STATUS "c_host (pkg-config build): not run, ${SHARED_DIR}/anims/linden/DANCE1.anim is absent")
endif()
run(${PKG_CONFIG} --exists --print-errors slanim-all slanim-capi)
