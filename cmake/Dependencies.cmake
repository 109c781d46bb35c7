# Every dependency comes from the system (Debian packages, see `make deps`); nothing is downloaded.
find_package(Threads REQUIRED)
find_package(cxxopts 3 REQUIRED CONFIG)
find_package(nlohmann_json 3.10 REQUIRED CONFIG)
find_package(yaml-cpp REQUIRED CONFIG)
find_package(CURL REQUIRED)
find_package(OpenSSL REQUIRED)
find_package(PkgConfig REQUIRED)
# S3 and STS answers are XML (libpugixml-dev).
find_package(pugixml 1.11 REQUIRED CONFIG)
if(NEURON_CACHE_BUILD_TESTS)
  find_package(doctest REQUIRED CONFIG)
  # Debian ships cpp-httplib as a compiled library described by pkg-config only.
  pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
endif()

# yaml-cpp 0.7 (bookworm) exports a plain `yaml-cpp` target; newer ones `yaml-cpp::yaml-cpp`.
if(TARGET yaml-cpp::yaml-cpp)
  set(NEURON_CACHE_YAML_TARGET yaml-cpp::yaml-cpp)
else()
  set(NEURON_CACHE_YAML_TARGET yaml-cpp)
endif()
set(NEURON_CACHE_PUGIXML_TARGET pugixml::pugixml)
# The release bundle's binary links libstdc++, yaml-cpp and pugixml statically (cmake/Portable.cmake).
include(Portable)

# Xet chunk compression: LZ4 frames (liblz4-dev). The portable binary links liblz4.a, so the
# bundle needs no liblz4.so.1 on the host.
if(NEURON_CACHE_PORTABLE)
  find_library(NEURON_CACHE_LZ4_STATIC NAMES liblz4.a)
  find_path(NEURON_CACHE_LZ4_INCLUDE_DIR lz4frame.h)
  if(NOT NEURON_CACHE_LZ4_STATIC OR NOT NEURON_CACHE_LZ4_INCLUDE_DIR)
    message(FATAL_ERROR "NEURON_CACHE_PORTABLE needs liblz4.a and lz4frame.h (Debian: liblz4-dev); "
                        "configure with -DNEURON_CACHE_PORTABLE=OFF to link the shared library")
  endif()
  add_library(neuron_cache_lz4 STATIC IMPORTED GLOBAL)
  set_target_properties(neuron_cache_lz4 PROPERTIES
    IMPORTED_LOCATION ${NEURON_CACHE_LZ4_STATIC}
    INTERFACE_INCLUDE_DIRECTORIES ${NEURON_CACHE_LZ4_INCLUDE_DIR})
  set(NEURON_CACHE_LZ4_TARGET neuron_cache_lz4)
else()
  pkg_check_modules(LZ4 REQUIRED IMPORTED_TARGET liblz4)
  set(NEURON_CACHE_LZ4_TARGET PkgConfig::LZ4)
endif()

# pugixml is C++: its shared library would need the host's libstdc++ (the bundle cannot carry
# Debian 12's, which needs glibc 2.36), so the portable binary links libpugixml.a.
if(NEURON_CACHE_PORTABLE AND TARGET pugixml::static)
  set(NEURON_CACHE_PUGIXML_TARGET pugixml::static)
else()
  set(NEURON_CACHE_PUGIXML_TARGET pugixml::pugixml)
endif()

# BLAKE3 (Xet hashes): Debian ships no C library, only the official C sources inside
# librust-blake3-dev; they are compiled into the project (cmake/Blake3.cmake).
file(GLOB NEURON_CACHE_BLAKE3_CANDIDATES LIST_DIRECTORIES true "/usr/share/cargo/registry/blake3-*/c")
list(SORT NEURON_CACHE_BLAKE3_CANDIDATES COMPARE NATURAL ORDER DESCENDING)
find_path(NEURON_CACHE_BLAKE3_SOURCE_DIR
  NAMES blake3.h blake3_dispatch.c
  PATHS ${NEURON_CACHE_BLAKE3_CANDIDATES}
  NO_DEFAULT_PATH
  DOC "Directory of the official BLAKE3 C sources (Debian: librust-blake3-dev)")
if(NOT NEURON_CACHE_BLAKE3_SOURCE_DIR)
  message(FATAL_ERROR "BLAKE3 C sources not found: install Debian's librust-blake3-dev (make deps) "
                      "or set NEURON_CACHE_BLAKE3_SOURCE_DIR to a directory holding blake3.h")
endif()
include(Blake3)
