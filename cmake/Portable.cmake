# A portable neuron-cache binary: one that the release bundle (`make dist`), the wheel and the
# .deb can ship to Ubuntu 22.04/24.04 and Amazon Linux 2023 (glibc 2.34) from a Debian 12
# build (glibc 2.36). What it takes from the host is glibc (symbol versions <= 2.34) and
# libgcc_s; libcurl and libcrypto come from the bundle or, in the .deb, from the packages.
#
# Two Debian 12 libraries cannot go in the bundle, because they need glibc 2.35/2.36:
# libstdc++.so.6 (arc4random@GLIBC_2.36) and libgcc_s.so.1 (_dl_find_object@GLIBC_2.35, which
# libgcc_eh.a needs too). So libstdc++ is linked statically (and yaml-cpp, a C++ library that
# would otherwise need libstdc++.so.6), arc4random is given by portable_runtime.cpp, and
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
       "Link libstdc++ and yaml-cpp statically so the binary needs glibc <= 2.34 only (release bundle)"
       ${portable_default})

# neuron_cache_use_portable_runtime(TARGET): an executable that links the C++ runtime statically.
function(neuron_cache_use_portable_runtime target)
  if(NEURON_CACHE_PORTABLE)
    target_sources(${target} PRIVATE ${PROJECT_SOURCE_DIR}/apps/neuron-cache/portable_runtime.cpp)
    target_link_options(${target} PRIVATE -static-libstdc++)
  endif()
endfunction()

# yaml-cpp as a static library: Debian's libyaml-cpp-dev ships libyaml-cpp.a beside the .so.
function(neuron_cache_static_yaml_target out_var)
  find_library(NEURON_CACHE_YAML_STATIC NAMES libyaml-cpp.a)
  if(NOT NEURON_CACHE_YAML_STATIC)
    message(FATAL_ERROR "NEURON_CACHE_PORTABLE needs libyaml-cpp.a (Debian: libyaml-cpp-dev); "
                        "configure with -DNEURON_CACHE_PORTABLE=OFF to link the shared library")
  endif()
  get_target_property(includes ${NEURON_CACHE_YAML_TARGET} INTERFACE_INCLUDE_DIRECTORIES)
  add_library(neuron_cache_yaml_static STATIC IMPORTED GLOBAL)
  set_target_properties(neuron_cache_yaml_static PROPERTIES
    IMPORTED_LOCATION ${NEURON_CACHE_YAML_STATIC}
    INTERFACE_INCLUDE_DIRECTORIES "${includes}")
  set(${out_var} neuron_cache_yaml_static PARENT_SCOPE)
endfunction()

if(NEURON_CACHE_PORTABLE)
  neuron_cache_static_yaml_target(NEURON_CACHE_YAML_TARGET)
endif()
