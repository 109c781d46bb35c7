# Precompiled headers for clang builds (the sanitizer and fuzz tree CI builds): the heavy
# headers most files include (nlohmann/json and the standard library's containers; doctest
# and cpp-httplib for the tests) are parsed once per target instead of once per file.
# Measured on 12 of libhubcache's files (ASan+UBSan, -O1): 114 CPU-s without, 91 with,
# the PCH's own build included. Not for g++ 12: its PCH is loaded whole into every file
# (95 files: 453 CPU-s without, 519 with) and it loses the system-header status of what it
# precompiles, so libstdc++'s false -Warray-bounds reports stop a -Werror build. Off under
# a compiler launcher such as ccache, which caches whole files anyway.
option(NEURON_CACHE_PCH "Precompile the common heavy headers of each target (clang)" ON)

set(NEURON_CACHE_PCH_HEADERS
  <nlohmann/json.hpp> <algorithm> <chrono> <filesystem> <functional> <map> <memory> <mutex>
  <optional> <set> <string> <string_view> <thread> <unordered_map> <vector>)

# neuron_cache_precompile(TARGET [HEADER...]): the common headers and HEADERs, precompiled
# for TARGET's sources.
function(neuron_cache_precompile target)
  if(NOT NEURON_CACHE_PCH OR CMAKE_CXX_COMPILER_LAUNCHER OR NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    return()
  endif()
  target_precompile_headers(${target} PRIVATE ${NEURON_CACHE_PCH_HEADERS} ${ARGN})
endfunction()
