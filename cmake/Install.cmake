include(GNUInstallDirs)
install(TARGETS neuron-cache RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES completions/neuron-cache.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME neuron-cache OPTIONAL)
install(FILES completions/_neuron-cache
        DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions OPTIONAL)
install(FILES completions/neuron-cache.fish
        DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d OPTIONAL)
install(FILES completions/neuron-cache.1
        DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 OPTIONAL)
