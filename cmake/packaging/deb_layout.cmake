# CPack pre-build script for the .deb (cmake/Packaging.cmake): Debian's places for what
# `cmake --install` lays out for a prefix.
# - zsh: from share/zsh/site-functions, where a zsh built for that prefix looks, to
#   share/zsh/vendor-completions, where Debian's and Ubuntu's zsh look for packaged ones;
# - the man page compressed (gzip -9n: no name or time stamp), as Debian policy asks.
set(usr "${CPACK_TEMPORARY_INSTALL_DIRECTORY}${CPACK_PACKAGING_INSTALL_PREFIX}")
if(NOT EXISTS "${usr}/share/zsh/site-functions/_neuron-cache" OR NOT EXISTS "${usr}/share/man/man1/neuron-cache.1")
  message(FATAL_ERROR "deb_layout.cmake: ${usr} lacks the zsh completion or the man page")
endif()
file(RENAME "${usr}/share/zsh/site-functions" "${usr}/share/zsh/vendor-completions")
execute_process(COMMAND gzip -9n "${usr}/share/man/man1/neuron-cache.1" COMMAND_ERROR_IS_FATAL ANY)
