# Sanitizer and fuzzing builds, included by the top-level CMakeLists.txt before any layer so the
# flags reach every target (libraries, tests, tools, harnesses).
#
#   BCAST_SANITIZE=ON    ASan + UBSan on everything (gcc or clang). UBSan does not recover: the
#                        first undefined behaviour aborts the test that hit it.
#   BCAST_BUILD_FUZZ=ON  libFuzzer harnesses in fuzz/ (clang only). All code gets
#                        -fsanitize=fuzzer-no-link so the libraries carry coverage counters;
#                        only the harness executables link the libFuzzer driver.
#
# scripts/sanitize.sh configures a clang tree with both and runs the whole suite in it.

option(BCAST_SANITIZE "Build everything with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
option(BCAST_BUILD_FUZZ "Build the libFuzzer harnesses in fuzz/ (needs clang)" OFF)

if(BCAST_SANITIZE)
  set(BCAST_SANITIZER_FLAGS
    -fsanitize=address,undefined
    -fno-sanitize-recover=undefined
    -fno-omit-frame-pointer)
  add_compile_options(${BCAST_SANITIZER_FLAGS})
  add_link_options(-fsanitize=address,undefined)
endif()

if(BCAST_BUILD_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "BCAST_BUILD_FUZZ needs clang (libFuzzer); configure with "
                        "-DCMAKE_CXX_COMPILER=clang++")
  endif()
  if(NOT BCAST_SANITIZE)
    # The coverage callbacks of fuzzer-no-link are defined by the sanitizer runtimes; without
    # one, test executables (linked without libFuzzer) would not link.
    message(FATAL_ERROR "BCAST_BUILD_FUZZ needs BCAST_SANITIZE=ON")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
