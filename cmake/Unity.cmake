# Unity builds: each target's sources are compiled in batches of 8 as one translation unit,
# so the heavy headers every file includes (nlohmann/json, the standard library, doctest,
# cpp-httplib) are parsed once a batch instead of once a file. A clean build is what CI and
# the README's `make test` and `make demo` do on 2 cores; there it more than halves the
# build (figures in docs/testing.md). For edit-compile loops a batch recompiles whole, so
# `make build UNITY=OFF` (or -DNEURON_CACHE_UNITY_BUILD=OFF) builds file by file again.
# What it asks of the code: names in anonymous namespaces must not clash across the files
# of one target (each unit test file keeps its helpers in a namespace of its own).
option(NEURON_CACHE_UNITY_BUILD "Compile each target's sources in unity batches" ON)

if(NEURON_CACHE_UNITY_BUILD)
  set(CMAKE_UNITY_BUILD ON)
  set(CMAKE_UNITY_BUILD_BATCH_SIZE 8)
endif()
