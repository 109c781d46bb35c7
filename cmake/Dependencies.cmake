# Every dependency comes from the system (Debian packages, see `make deps`); nothing is downloaded.
find_package(Threads REQUIRED)
find_package(cxxopts 3 REQUIRED CONFIG)
find_package(nlohmann_json 3.10 REQUIRED CONFIG)
find_package(yaml-cpp REQUIRED CONFIG)
find_package(CURL REQUIRED)
find_package(OpenSSL REQUIRED)
# S3 answers are XML (libpugixml-dev).
find_package(pugixml 1.11 REQUIRED CONFIG)
if(NEURON_CACHE_BUILD_TESTS)
  find_package(doctest REQUIRED CONFIG)
  find_package(PkgConfig REQUIRED)
  # Debian ships cpp-httplib as a compiled library described by pkg-config only.
  pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
endif()

# yaml-cpp 0.7 (bookworm) exports a plain `yaml-cpp` target; newer ones `yaml-cpp::yaml-cpp`.
if(TARGET yaml-cpp::yaml-cpp)
  set(NEURON_CACHE_YAML_TARGET yaml-cpp::yaml-cpp)
else()
  set(NEURON_CACHE_YAML_TARGET yaml-cpp)
endif()
