# The .deb (`make deb`: cpack --config BUILD/CPackConfig.cmake): what `cmake --install`
# installs (the stripped binary, the completions, the man page) under /usr, for Debian 12 and
# Ubuntu 22.04/24.04. The binary is the portable one (cmake/Portable.cmake): of Debian's
# packages it needs libc6, libgcc-s1, libcurl4 and libssl3 (libcrypto.so.3) only.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME neuron-cache)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "neuron-cache")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Share the AWS Neuron compile cache through a Hugging Face Hub, directory or S3 repo")
set(CPACK_PACKAGE_DESCRIPTION
    "neuron-cache shares the Neuron compiler's cache (neuronx-cc) between hosts through a cache repo: a Hugging Face Hub model repo compatible with optimum-neuron's Neuron model cache, a directory (local disk, NFS, FSx for Lustre) or an S3 prefix.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "neuron-cache maintainers <neuron-cache@localhost>")
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://huggingface.co/docs/optimum-neuron")
# Written out rather than computed by dpkg-shlibdeps, so Ubuntu 24.04's renamed libraries
# (the 64-bit time_t transition: libcurl4t64, libssl3t64) satisfy it too. The versions are
# dpkg-shlibdeps' for this binary on Debian 12; tests/packaging/test_packages.sh fails when
# dpkg-shlibdeps asks for a package or a version this list lacks.
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "libc6 (>= 2.34), libgcc-s1 (>= 4.2), libcurl4 (>= 7.16.2) | libcurl4t64 (>= 7.16.2), libssl3 (>= 3.0.0) | libssl3t64 (>= 3.0.0)")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)
set(CPACK_STRIP_FILES OFF) # already stripped (cmake/Install.cmake)
# Debian's zsh reads packaged completions from /usr/share/zsh/vendor-completions.
set(CPACK_PRE_BUILD_SCRIPTS ${PROJECT_SOURCE_DIR}/cmake/packaging/deb_layout.cmake)
set(CPACK_PACKAGE_CHECKSUM SHA256)
include(CPack)
