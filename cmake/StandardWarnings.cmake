# Interface target carrying the project's warning flags; every first-party target links it.
add_library(standard_warnings INTERFACE)
target_compile_options(standard_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
  -Wunused -Woverloaded-virtual -Wnull-dereference -Wdouble-promotion -Wformat=2
  -Wimplicit-fallthrough)
if(NEURON_CACHE_WERROR)
  target_compile_options(standard_warnings INTERFACE -Werror)
endif()
# Sanitizers and fuzzing coverage (cmake/Sanitizers.cmake) reach every first-party target
# through the same interface target.
include(Sanitizers)
target_link_libraries(standard_warnings INTERFACE neuron_cache_instrumentation)
