// neuron-cache-test-hub: a local Hugging Face Hub for end-to-end tests.
//
//   neuron-cache-test-hub --port 0 --data DIR [--user NAME:TOKEN:ROLE]... [--org ORG:USER[,USER...]]...
//                         [--page-size N] [--lfs-threshold BYTES] [--multipart-chunk-size BYTES]
//                         [--no-lfs-verify] [--threads N] [--latency-ms N] [--bandwidth-mbps N]
//
// --latency-ms and --bandwidth-mbps model a wide-area network (an AWS region to the Hub):
// N ms are added before every response (API calls and file transfers alike), and every
// connection moves at most N megabits per second each way. Sockets use TCP_NODELAY.
//
// Binds 127.0.0.1 only (port 0 = any free port). Once it accepts connections it prints its
// base URL `http://127.0.0.1:PORT` as the first stdout line and flushes. SIGTERM/SIGINT stop
// it cleanly. State lives under --data (see storage.hpp) and survives restarts. Tokens must
// start with hf_ (the JS client refuses others); ROLE is read or write. A user may write to
// its own namespace and to the orgs it belongs to (--org).
//
// Hub API served (hub-api.md §2): whoami-v2, repos/create|delete, models/{repo}[/revision/{rev}],
// tree (paginated with an absolute `Link: <...&cursor=...>; rel="next"`), paths-info (JSON or
// form), resolve|raw (HEAD/GET, Range, LFS files 302 to /_lfs/cdn/...), preupload, LFS batch
// (basic + multipart, never xet) with upload/part/completion/verify URLs, NDJSON commit,
// branch create/delete, refs, commits, settings, validate-yaml.
//
// Test-only control routes (no auth; loopback test server only):
//   POST   /_test/faults   {"match":"<substring>","method":"GET|HEAD|POST|PUT|DELETE|*","count":N,
//                           "action":"<action>", ...}
//          `match` is looked for in the percent-decoded request path and in the raw target
//          (path + query), so "cursor=" matches only follow-up tree pages. The fault applies to
//          the next `count` matching requests, then expires. Actions:
//            status            + "status": 500|503|429|408..., optional "retry_after": seconds ->
//                              Retry-After; a 429 also carries `RateLimit: "api";r=0;t=<retry_after>`
//                              and RateLimit-Policy. The operation is NOT performed.
//            malformed_json    200 with a body that is not JSON. The operation is NOT performed.
//            drop_after_bytes  + "bytes": K. Request with a body (uploads, commits): K body bytes
//                              are read, then the connection drops (headers only, no response
//                              body; the operation is not performed). Otherwise the response
//                              headers and its first K body bytes are sent, then the connection drops.
//            truncate_body     full Content-Length advertised, fewer bytes sent ("bytes": K, default
//                              half), then the connection drops.
//            corrupt_body      same size, every byte altered.
//            wrong_size        X-Linked-Size (LFS 302) or Content-Length advertises "size" (default
//                              real size + 1); a GET then sends the real bytes and drops if short.
//          Body faults (drop/truncate/corrupt) skip HEAD requests and 3xx answers, so matching a
//          file name hits the byte transfer, not the redirect that precedes it.
//   GET    /_test/faults   the live faults.      DELETE /_test/faults   clears them.
//   POST   /_test/inject-tree-entry {"repo":"ns/name","path":"<any path>","content":"text"[,"branch":"main"]}
//          commits a raw entry without path validation (../evil, /abs, .git/x...), for
//          client path-safety tests; answers {"commitOid"}.
//   GET    /_test/stats    {"total":N,"by_route":{...},"by_method":{...}} (control routes not
//          counted). Route names: whoami repo_create repo_delete repo_settings model_info tree
//          paths_info resolve raw preupload commit lfs_batch lfs_verify lfs_upload lfs_part
//          lfs_complete lfs_cdn branch_create branch_delete refs commits validate_yaml unknown.
//   POST   /_test/stats/reset
//   GET    /_test/health

#include <pthread.h>
#include <signal.h>

#include <cstdlib>
#include <iostream>
#include <thread>

#include <cxxopts.hpp>

#include "hub_server.hpp"

namespace {

// Never runs (the signals stay blocked for sigwait); installing it undoes a SIG_IGN
// inherited from a non-interactive shell, which would make sigwait miss SIGINT.
void ignore_signal(int) {}

testhub::User parse_user(const std::string& spec)
{
  const auto parts = testhub::split(spec, ':');
  if (parts.size() != 3 || parts[0].empty() || parts[1].rfind("hf_", 0) != 0
      || (parts[2] != "read" && parts[2] != "write"))
    throw std::invalid_argument("--user must be NAME:TOKEN:ROLE with a token starting with hf_ and ROLE read|write: "
                                + spec);
  return {parts[0], parts[1], parts[2]};
}

} // namespace

int main(int argc, char** argv)
{
  cxxopts::Options cli("neuron-cache-test-hub", "A local Hugging Face Hub for tests");
  cli.add_options()("port", "port (0: any free port)", cxxopts::value<int>()->default_value("0"))(
    "data", "state directory", cxxopts::value<std::string>())("user", "NAME:TOKEN:ROLE (repeatable)",
                                                              cxxopts::value<std::vector<std::string>>())(
    "org", "ORG:USER[,USER...] (repeatable)", cxxopts::value<std::vector<std::string>>())(
    "page-size", "tree entries per page", cxxopts::value<std::size_t>()->default_value("1000"))(
    "lfs-threshold", "files larger than this are LFS", cxxopts::value<std::uint64_t>()->default_value("10485760"))(
    "multipart-chunk-size", "LFS objects larger than this upload in parts of this size",
    cxxopts::value<std::uint64_t>()->default_value("5368709120"))(
    "no-lfs-verify", "do not offer the LFS verify action")("threads", "worker threads",
                                                           cxxopts::value<std::size_t>()->default_value("32"))(
    "latency-ms", "delay added before every response", cxxopts::value<std::uint64_t>()->default_value("0"))(
    "bandwidth-mbps", "per-connection cap in megabits per second (0: none)",
    cxxopts::value<double>()->default_value("0"))("h,help", "help");
  testhub::HubOptions options;
  try {
    const auto args = cli.parse(argc, argv);
    if (args.count("help")) {
      std::cout << cli.help() << "\n";
      return 0;
    }
    if (!args.count("data"))
      throw std::invalid_argument("--data DIR is required");
    options.port = args["port"].as<int>();
    options.data = args["data"].as<std::string>();
    if (args.count("user"))
      for (const auto& spec : args["user"].as<std::vector<std::string>>())
        options.users.push_back(parse_user(spec));
    if (args.count("org")) {
      for (const auto& spec : args["org"].as<std::vector<std::string>>()) {
        const auto colon = spec.find(':');
        if (colon == std::string::npos || colon == 0)
          throw std::invalid_argument("--org must be ORG:USER[,USER...]");
        options.orgs[spec.substr(0, colon)] = testhub::split(spec.substr(colon + 1), ',');
      }
    }
    options.page_size = args["page-size"].as<std::size_t>();
    options.lfs_threshold = args["lfs-threshold"].as<std::uint64_t>();
    options.multipart_chunk_size = args["multipart-chunk-size"].as<std::uint64_t>();
    options.offer_verify = !args.count("no-lfs-verify");
    options.threads = std::max<std::size_t>(4, args["threads"].as<std::size_t>());
    options.latency_ms = args["latency-ms"].as<std::uint64_t>();
    options.bandwidth_mbps = args["bandwidth-mbps"].as<double>();
    if (!(options.bandwidth_mbps >= 0) || options.latency_ms > 600000)
      throw std::invalid_argument("--bandwidth-mbps must be >= 0 and --latency-ms at most 600000");
    if (options.page_size == 0 || options.multipart_chunk_size == 0)
      throw std::invalid_argument("--page-size and --multipart-chunk-size must be positive");
  } catch (const std::exception& e) {
    std::cerr << "neuron-cache-test-hub: " << e.what() << "\n";
    return 2;
  }

  // Signals are taken by a dedicated thread, so every other thread runs with them blocked.
  signal(SIGTERM, ignore_signal);
  signal(SIGINT, ignore_signal);
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  try {
    testhub::HubServer server(options);
    if (server.bind() <= 0) {
      std::cerr << "neuron-cache-test-hub: cannot bind 127.0.0.1:" << options.port << "\n";
      return 1;
    }
    std::thread signal_waiter([&server, stop_signals] {
      int received = 0;
      sigwait(&stop_signals, &received);
      server.stop();
    });
    std::cout << server.base_url() << std::endl;
    const bool ok = server.listen();
    // listen() returns after stop(); if it failed on its own, wake the waiter to exit.
    pthread_kill(signal_waiter.native_handle(), SIGTERM);
    signal_waiter.join();
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "neuron-cache-test-hub: " << e.what() << "\n";
    return 1;
  }
}
