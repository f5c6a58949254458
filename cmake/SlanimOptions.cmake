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
    if(SLANIM_SANITIZE)
      target_compile_options(${tgt} PRIVATE -fsanitize=address,undefined
        -fno-sanitize-recover=all -fno-omit-frame-pointer)
      target_link_options(${tgt} PRIVATE -fsanitize=address,undefined)
    endif()
  endif()
endfunction()
