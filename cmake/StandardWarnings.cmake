# Interface target carrying the project's warning flags; every first-party target links it.
add_library(standard_warnings INTERFACE)
target_compile_options(standard_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
  -Wunused -Woverloaded-virtual -Wnull-dereference -Wdouble-promotion -Wformat=2
  -Wimplicit-fallthrough)
if(NEURON_CACHE_WERROR)
  target_compile_options(standard_warnings INTERFACE -Werror)
endif()
