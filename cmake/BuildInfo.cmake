# Run at build time (cmake -P) by apps/neuron-cache: writes OUTPUT, the C++ file that gives
# `neuron-cache --version` its commit and build date, only when its content changes, so a
# build that changes neither recompiles nothing.
#   -DSOURCE_DIR=  the source tree (its git commit is read when COMMIT is empty)
#   -DOUTPUT=      the file to write
#   -DVERSION=     the project version
#   -DCOMMIT=      the commit, for builds from a tree without .git (optional)
# The date is the day of the build in UTC, or that of SOURCE_DATE_EPOCH when it is set
# (reproducible builds): string(TIMESTAMP) honours it.
if(NOT COMMIT)
  set(COMMIT unknown)
  find_program(GIT_EXECUTABLE git)
  if(GIT_EXECUTABLE)
    execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} rev-parse --verify -q HEAD
                    OUTPUT_VARIABLE head RESULT_VARIABLE head_status OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(head_status EQUAL 0 AND head MATCHES "^[0-9a-f]+$")
      set(COMMIT ${head})
      # Tracked files that differ from the commit: the binary is not that commit's.
      execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} diff --quiet HEAD --
                      RESULT_VARIABLE dirty OUTPUT_QUIET ERROR_QUIET)
      if(dirty EQUAL 1)
        string(APPEND COMMIT "-dirty")
      endif()
    endif()
  endif()
endif()
if(NOT COMMIT MATCHES "^([0-9a-f]+(-dirty)?|unknown)$")
  message(FATAL_ERROR "BuildInfo: COMMIT '${COMMIT}' is neither a hexadecimal commit nor 'unknown'")
endif()
string(TIMESTAMP BUILD_DATE "%Y-%m-%d" UTC)
file(CONFIGURE OUTPUT "${OUTPUT}" @ONLY CONTENT [[
// Generated at build time by cmake/BuildInfo.cmake: do not edit.
#include "build_info.hpp"

namespace neuron_cache {

const BuildInfo k_build_info{"@VERSION@", "@COMMIT@", "@BUILD_DATE@"};

} // namespace neuron_cache
]])
