// neuron-cache-test-hub: a local Hugging Face Hub for end-to-end tests.
//
//   neuron-cache-test-hub --port 0 --data DIR [--user NAME:TOKEN:ROLE[:PLAN]]... [--org ORG:USER[,USER...]]...
//                         [--page-size N] [--lfs-threshold BYTES] [--multipart-chunk-size BYTES]
//                         [--no-lfs-verify] [--threads N] [--latency-ms N] [--bandwidth-mbps N] [--xet]
//                         [--xet-token-lifetime SECONDS] [limit options, below]
//
// --xet: speak Xet like the Hub (xet-read/write-token, a verifying CAS under /cas, the LFS
// batch's "xet" transfer when offered, X-Xet-Hash and Link headers on resolve, `xetHash` in
// tree listings). Without it the server behaves exactly as before. --xet-token-lifetime
// issues short-lived Xet tokens, so that clients must refresh them in the middle of a push.
//
// The real Hub's limits are on by default, with the Hub's values (hub-buckets-and-limits.md §2);
// tests set small ones:
//   --commits-per-hour N (128) per repo, over --commit-window-s S (3600): the next commit
//       gets 429 "You have exceeded the rate limit for repository commits (128 per hour)..."
//       with Retry-After. 0: unlimited.
//   --commit-timeout-ms N (60000): a commit request that takes longer is applied, but
//       answered 504 (the client saw a timeout). --commit-cost-us-per-file N (0) makes the
//       server work that long per file of a commit. --max-files-per-commit N (0: none, as
//       the Hub) refuses bigger commits with 400.
//   --max-folder-entries N (10000): a commit leaving more direct entries (files and
//       folders) in a folder it adds to gets the Hub's 400 "...too many files per
//       directory... Offending directories: /<dir>/". 0: unlimited.
//   --max-repo-files N (100000, the Hub's recommendation): a commit past it gets a
//       `Warning: 299 - "..."` header, or 400 with --refuse-past-max-repo-files.
//   Quotas per fixed window of --quota-window-s S (300) and per user (anonymous: per IP),
//       from the user's PLAN (--user NAME:TOKEN:ROLE:PLAN; free unless given; anonymous 500
//       api / 3,000 resolvers, free 1,000 / 5,000, pro 2,500 / 12,000, team and academia
//       3,000 / 20,000, enterprise 6,000 / 50,000, enterprise-plus 10,000 / 100,000,
//       unlimited), or --api-quota N / --resolver-quota N for everyone (0: unlimited).
//       "api" = /api/* and the LFS batch endpoint, "resolvers" = /resolve and /raw. Every
//       counted answer carries `RateLimit: "api";r=<left>;t=<s to reset>` and
//       `RateLimit-Policy: "fixed window";"api";q=<quota>;w=<window>`; a spent quota answers
//       429 with Retry-After. --no-quotas turns them off.
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
//          the next `count` matching requests (after the first "after": N, which pass), then
//          expires. Actions:
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
//            short_body        a whole answer, "bytes" (default half) shorter than the real one
//                              (Content-Length says so): a server that lies about a range.
//            wrong_size        X-Linked-Size (LFS 302) or Content-Length advertises "size" (default
//                              real size + 1); a GET then sends the real bytes and drops if short.
//          Body faults (drop/truncate/corrupt) skip HEAD requests and 3xx answers, so matching a
//          file name hits the byte transfer, not the redirect that precedes it.
//   GET    /_test/faults   the live faults.      DELETE /_test/faults   clears them.
//   POST   /_test/inject-tree-entry {"repo":"ns/name","path":"<any path>","content":"text"[,"branch":"main"]}
//          commits a raw entry without path validation (../evil, /abs, .git/x...), for
//          client path-safety tests; answers {"commitOid"}.
//   GET    /_test/stats    {"total":N,"by_route":{...},"by_method":{...}} (control routes not
//          counted; "by_status" counts answers by HTTP status). Route names: whoami repo_create repo_delete
//          repo_settings model_info tree paths_info resolve raw preupload commit lfs_batch lfs_verify lfs_upload
//          lfs_part lfs_complete lfs_cdn branch_create branch_delete refs commits validate_yaml unknown.
//   POST   /_test/stats/reset
//   POST   /_test/clock {"offset_seconds": N}  commits made from now on are dated N seconds
//          from the real time (negative: in the past), for tests of date-based pruning.
//   GET    /_test/health

#include <malloc.h>
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
  const auto plan = parts.size() == 4 ? testhub::plan_quota(parts[3]) : testhub::plan_quota("free");
  if ((parts.size() != 3 && parts.size() != 4) || parts[0].empty() || parts[1].rfind("hf_", 0) != 0
      || (parts[2] != "read" && parts[2] != "write") || !plan)
    throw std::invalid_argument("--user must be NAME:TOKEN:ROLE[:PLAN] with a token starting with hf_, ROLE "
                                "read|write and PLAN free|pro|team|academia|enterprise|enterprise-plus|unlimited: "
                                + spec);
  return {parts[0], parts[1], parts[2], *plan};
}

void add_limit_options(cxxopts::Options& cli)
{
  cli.add_options()("commits-per-hour", "commits per repo per window (0: unlimited)",
                    cxxopts::value<std::uint64_t>()->default_value("128"))(
    "commit-window-s", "the commit-rate window", cxxopts::value<std::uint64_t>()->default_value("3600"))(
    "commit-timeout-ms", "a commit taking longer is applied but answered 504 (0: none)",
    cxxopts::value<std::uint64_t>()->default_value("60000"))("commit-cost-us-per-file",
                                                             "server-side work per file of a commit",
                                                             cxxopts::value<std::uint64_t>()->default_value("0"))(
    "max-files-per-commit", "files per commit (0: no limit)", cxxopts::value<std::uint64_t>()->default_value("0"))(
    "max-folder-entries", "direct entries per folder (0: unlimited)",
    cxxopts::value<std::uint64_t>()->default_value("10000"))("max-repo-files",
                                                             "files per repo before a warning (0: none)",
                                                             cxxopts::value<std::uint64_t>()->default_value("100000"))(
    "refuse-past-max-repo-files", "refuse commits past --max-repo-files instead of warning")(
    "quota-window-s", "api / resolvers quota window", cxxopts::value<std::uint64_t>()->default_value("300"))(
    "api-quota", "api requests per window for everyone (0: unlimited)",
    cxxopts::value<std::uint64_t>())("resolver-quota", "resolver requests per window for everyone (0: unlimited)",
                                     cxxopts::value<std::uint64_t>())("no-quotas", "no api / resolvers quotas");
}

testhub::LimitOptions parse_limit_options(const cxxopts::ParseResult& args)
{
  testhub::LimitOptions limits;
  limits.commits_per_window = args["commits-per-hour"].as<std::uint64_t>();
  limits.commit_window = std::chrono::seconds(args["commit-window-s"].as<std::uint64_t>());
  limits.commit_timeout = std::chrono::milliseconds(args["commit-timeout-ms"].as<std::uint64_t>());
  limits.commit_cost_per_file = std::chrono::microseconds(args["commit-cost-us-per-file"].as<std::uint64_t>());
  limits.files_per_commit = args["max-files-per-commit"].as<std::uint64_t>();
  limits.entries_per_folder = args["max-folder-entries"].as<std::uint64_t>();
  limits.repo_files = args["max-repo-files"].as<std::uint64_t>();
  limits.refuse_past_repo_files = args.count("refuse-past-max-repo-files") > 0;
  limits.quota_window = std::chrono::seconds(args["quota-window-s"].as<std::uint64_t>());
  if (args.count("api-quota"))
    limits.override_api = args["api-quota"].as<std::uint64_t>();
  if (args.count("resolver-quota"))
    limits.override_resolvers = args["resolver-quota"].as<std::uint64_t>();
  limits.quotas = args.count("no-quotas") == 0;
  if (limits.commit_window.count() == 0 || limits.quota_window.count() == 0)
    throw std::invalid_argument("--commit-window-s and --quota-window-s must be positive");
  return limits;
}

} // namespace

int main(int argc, char** argv)
{
  // Large buffers (a shard's journal lines, a commit's file list) come from the heap and stay
  // there when freed: on a virtual machine each fresh page's fault costs more than the work
  // that fills it, and a benchmark would measure the test Hub's page faults.
  ::mallopt(M_MMAP_THRESHOLD, 256 << 20);
  ::mallopt(M_TRIM_THRESHOLD, 512 << 20);
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
    cxxopts::value<double>()->default_value("0"))("xet", "speak Xet (token endpoints, CAS, batch xet transfer)")(
    "xet-token-lifetime", "seconds a Xet access token lives (default 3600)",
    cxxopts::value<std::int64_t>()->default_value("3600"))(
    "log-requests",
    "one line per request on stderr: start (ms since start), route, method, target, status, handler ms")("h,help",
                                                                                                         "help");
  add_limit_options(cli);
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
    options.limits = parse_limit_options(args);
    options.xet = args.count("xet") > 0;
    options.log_requests = args.count("log-requests") > 0;
    options.xet_token_lifetime_s = args["xet-token-lifetime"].as<std::int64_t>();
    if (options.xet_token_lifetime_s < 1 || options.xet_token_lifetime_s > 86400)
      throw std::invalid_argument("--xet-token-lifetime must be between 1 and 86400 seconds");
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
