# The official BLAKE3 C implementation, built from the sources found by Dependencies.cmake
# (NEURON_CACHE_BLAKE3_SOURCE_DIR) as the static library `blake3`. On x86-64 Linux the
# SSE2/SSE4.1/AVX2/AVX-512 assembly units are compiled in and chosen at run time by
# blake3_dispatch.c (CPUID); elsewhere only the portable code.
enable_language(C)
set(blake3_dir "${NEURON_CACHE_BLAKE3_SOURCE_DIR}")
set(blake3_sources "${blake3_dir}/blake3.c" "${blake3_dir}/blake3_dispatch.c" "${blake3_dir}/blake3_portable.c")
if(CMAKE_SYSTEM_NAME STREQUAL "Linux" AND CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  enable_language(ASM)
  foreach(unit sse2 sse41 avx2 avx512)
    list(APPEND blake3_sources "${blake3_dir}/blake3_${unit}_x86-64_unix.S")
  endforeach()
  set(blake3_definitions)
  set(NEURON_CACHE_BLAKE3_SIMD "x86-64 SSE2/SSE4.1/AVX2/AVX-512 (run-time dispatch)")
else()
  set(blake3_definitions BLAKE3_NO_SSE2 BLAKE3_NO_SSE41 BLAKE3_NO_AVX2 BLAKE3_NO_AVX512 BLAKE3_USE_NEON=0)
  set(NEURON_CACHE_BLAKE3_SIMD "portable")
endif()
add_library(blake3 STATIC ${blake3_sources})
target_include_directories(blake3 SYSTEM PUBLIC "${blake3_dir}")
target_compile_definitions(blake3 PRIVATE ${blake3_definitions})
set_target_properties(blake3 PROPERTIES C_STANDARD 99 POSITION_INDEPENDENT_CODE ON)
message(STATUS "BLAKE3 C sources: ${blake3_dir} (${NEURON_CACHE_BLAKE3_SIMD})")
