# A portable neuron-cache binary: one that the release bundle (`make dist`), the wheel and the
# .deb can ship to Ubuntu 22.04/24.04 and Amazon Linux 2023 (glibc 2.34) from a Debian 12
# build (glibc 2.36). What it takes from the host is glibc (symbol versions <= 2.34) and
# libgcc_s; libcurl and libcrypto come from the bundle or, in the .deb, from the packages.
#
# Two Debian 12 libraries cannot go in the bundle, because they need glibc 2.35/2.36:
# libstdc++.so.6 (arc4random@GLIBC_2.36) and libgcc_s.so.1 (_dl_find_object@GLIBC_2.35, which
# libgcc_eh.a needs too). So libstdc++ is linked statically (and yaml-cpp and pugixml, C++
# libraries that would otherwise need libstdc++.so.6), arc4random is given by portable_runtime.cpp, and
# libgcc_s is the host's: every glibc system has it (glibc loads it for pthread_cancel, Debian's
# libc6 depends on it), and the audit (cmake/packaging/audit.py) caps its versions at GCC_7.0.0.
#
# Sanitizer and fuzz builds (clang) keep the ordinary dynamic runtime.
if(NEURON_CACHE_SANITIZE STREQUAL "" AND NOT NEURON_CACHE_FUZZ AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  set(portable_default ON)
else()
  set(portable_default OFF)
endif()
option(NEURON_CACHE_PORTABLE
       "Link libstdc++, yaml-cpp and pugixml statically so the binary needs glibc <= 2.34 only (release bundle)"
       ${portable_default})

# neuron_cache_use_portable_runtime(TARGET): an executable that links the C++ runtime statically.
function(neuron_cache_use_portable_runtime target)
  if(NEURON_CACHE_PORTABLE)
    target_sources(${target} PRIVATE ${PROJECT_SOURCE_DIR}/apps/neuron-cache/portable_runtime.cpp)
    target_link_options(${target} PRIVATE -static-libstdc++)
  endif()
endfunction()

# A C++ library as a static one, in place of the shared `target` named by `var`: Debian's
# -dev packages ship lib<NAME>.a beside the .so (libyaml-cpp-dev, libpugixml-dev).
function(neuron_cache_static_target var archive package)
  string(MAKE_C_IDENTIFIER "${archive}" id)
  find_library(NEURON_CACHE_STATIC_${id} NAMES ${archive})
  if(NOT NEURON_CACHE_STATIC_${id})
    message(FATAL_ERROR "NEURON_CACHE_PORTABLE needs ${archive} (Debian: ${package}); "
                        "configure with -DNEURON_CACHE_PORTABLE=OFF to link the shared library")
  endif()
  get_target_property(includes ${${var}} INTERFACE_INCLUDE_DIRECTORIES)
  add_library(neuron_cache_static_${id} STATIC IMPORTED GLOBAL)
  set_target_properties(neuron_cache_static_${id} PROPERTIES
    IMPORTED_LOCATION ${NEURON_CACHE_STATIC_${id}}
    INTERFACE_INCLUDE_DIRECTORIES "${includes}")
  set(${var} neuron_cache_static_${id} PARENT_SCOPE)
endfunction()

if(NEURON_CACHE_PORTABLE)
  neuron_cache_static_target(NEURON_CACHE_YAML_TARGET libyaml-cpp.a libyaml-cpp-dev)
  neuron_cache_static_target(NEURON_CACHE_PUGIXML_TARGET libpugixml.a libpugixml-dev)
endif()
