#pragma once

#include <httplib.h>

namespace testhub {

// An httplib::Server whose connections read through a 256 KiB buffer.
//
// The Debian build of cpp-httplib reads a request body 4 KiB at a time, with a poll before
// each recv: two system calls per 4 KiB, a million for a 2 GB Xet push. On the shared VMs
// that run the benchmarks those calls were most of the test Hub's CPU, taken from the two
// cores the client under test runs on. The library's own extension point for this (how its
// SSL server plugs in another stream) is the per-connection socket handler; this one keeps
// the library's request parsing, routing and timeouts, and only changes how bytes move:
// one recv per buffer's worth, timeouts set once on the socket instead of a poll per call.
class BufferedServer : public httplib::Server {
private:
  bool process_and_close_socket(socket_t sock) override;
};

} // namespace testhub
