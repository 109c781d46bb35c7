# Sanitizer and fuzzing instrumentation for every first-party target: StandardWarnings
# links `neuron_cache_instrumentation` into `standard_warnings`, which every first-party
# library, program and test links.
#
#   NEURON_CACHE_SANITIZE=address,undefined   `make test SANITIZE=address,undefined`
#   NEURON_CACHE_FUZZ=ON                      `make fuzz` (clang only): libFuzzer targets in
#                                             tests/fuzz, built with ASan and UBSan
set(NEURON_CACHE_SANITIZE "" CACHE STRING
    "Comma-separated -fsanitize= list for every first-party target (e.g. address,undefined)")
option(NEURON_CACHE_FUZZ "Build the libFuzzer targets in tests/fuzz (needs clang)" OFF)

add_library(neuron_cache_instrumentation INTERFACE)

if(NEURON_CACHE_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "NEURON_CACHE_FUZZ needs clang (libFuzzer): configure with CXX=clang++ "
                        "(found ${CMAKE_CXX_COMPILER_ID})")
  endif()
  if(NEURON_CACHE_SANITIZE STREQUAL "")
    set(NEURON_CACHE_SANITIZE "address,undefined")
  endif()
  # Coverage for libFuzzer in every first-party object; the fuzz targets add
  # -fsanitize=fuzzer at link time, which brings libFuzzer's main.
  target_compile_options(neuron_cache_instrumentation INTERFACE -fsanitize=fuzzer-no-link)
  # Assertions stay on under the fuzzer: nlohmann's JSON_ASSERT stops a const operator[]
  # on a missing key at once, where NDEBUG leaves a read of freed memory ASan sees only
  # sometimes.
  target_compile_options(neuron_cache_instrumentation INTERFACE -UNDEBUG)
endif()

if(NOT NEURON_CACHE_SANITIZE STREQUAL "")
  set(sanitize_flags -fsanitize=${NEURON_CACHE_SANITIZE} -fno-omit-frame-pointer)
  if(NEURON_CACHE_SANITIZE MATCHES "undefined")
    # A UBSan finding stops the program instead of printing and going on, so tests fail.
    list(APPEND sanitize_flags -fno-sanitize-recover=all)
  endif()
  target_compile_options(neuron_cache_instrumentation INTERFACE ${sanitize_flags})
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    # Line tables are what a report's stack needs (file and line); full -g debug info only
    # slowed CI's clang build (4 heavy files: 39 s with -g, 35 s with line tables, 34.5 s
    # with -O1 as well, which would slow the tests it runs). After the build type's -g, so
    # it wins.
    target_compile_options(neuron_cache_instrumentation INTERFACE -gline-tables-only)
    # Position-dependent programs: an instrumented PIE carries some 220,000 relative
    # relocations (ASan's global descriptors), which the loader applies at every start;
    # the suite starts some 3,000 programs. Without them a start takes 18 ms less (136 ->
    # 118 ms with the leak check). The release build keeps PIE.
    target_link_options(neuron_cache_instrumentation INTERFACE -no-pie)
  endif()
  target_link_options(neuron_cache_instrumentation INTERFACE ${sanitize_flags})
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # GCC documents that -fsanitize=address can cause false -Wmaybe-uninitialized
    # warnings; with -Werror (CI) libstdc++'s <regex>, used by cxxopts, stops the build.
    target_compile_options(neuron_cache_instrumentation INTERFACE -Wno-maybe-uninitialized)
  endif()
endif()
