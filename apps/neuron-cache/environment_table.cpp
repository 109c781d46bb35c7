#include "environment_table.hpp"

namespace neuron_cache {

namespace {

// The repo, the Hub and its token (huggingface_hub's names).
std::vector<EnvironmentVariable> hub_variables()
{
  return {
    {"CUSTOM_CACHE_REPO",
     "The cache repo to use when --repo-id is not given; takes precedence over the name saved by set (as in "
     "optimum-neuron).",
     ""},
    {"HF_HOME", "Hugging Face home: holds optimum_neuron_custom_cache (the repo saved by set and create) and token.",
     "$XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface"},
    {"HF_HUB_CACHE",
     "The Hugging Face Hub cache: a push follows symlinks from the compile cache to regular files below it (where "
     "optimum's compile-time proxy links its downloads).",
     "$HF_HOME/hub"},
    {"HUGGINGFACE_HUB_CACHE", "Same as HF_HUB_CACHE (older name; HF_HUB_CACHE wins).", ""},
    {"HF_TOKEN", "Token for Hub repos when --token is not given. Never printed or logged.", ""},
    {"HUGGING_FACE_HUB_TOKEN", "Token for Hub repos when neither --token nor HF_TOKEN is given (older name).", ""},
    {"HF_TOKEN_PATH", "The token file read when no token is given otherwise.", "$HF_HOME/token"},
    {"HF_ENDPOINT", "Base URL of the Hub.", "https://huggingface.co"},
    {"HF_HUB_OFFLINE",
     "When 1, ON, YES or TRUE, no network request is made: commands that need the Hub fail with a clear error; "
     "directory repos work as usual.",
     "0"},
    {"TRANSFORMERS_OFFLINE", "Same as HF_HUB_OFFLINE (older name).", "0"},
    {"HF_HUB_DISABLE_XET",
     "When 1, ON, YES or TRUE, Hub pushes and pulls never use Xet: files go through LFS as with a Hub "
     "that does not offer Xet.",
     "0"},
    {"HF_HUB_DOWNLOAD_TIMEOUT",
     "Seconds a Hub transfer may move less than 1 KiB a second before it is retried (at least 1).", "30"},
  };
}

// The compile cache, and neuron-cache's own limits and tunings.
std::vector<EnvironmentVariable> compile_cache_variables()
{
  return {
    {"NEURON_CC_FLAGS",
     "Neuron compiler flags. A --cache_dir=DIR in them names the local compile cache (before "
     "NEURON_COMPILE_CACHE_URL); add keeps them for the command it runs and records them in the registry entry.",
     ""},
    {"NEURON_COMPILE_CACHE_URL",
     "The Neuron compile cache that synchronize and add work on, when neither --cache-dir nor NEURON_CC_FLAGS names "
     "one. An s3://bucket/prefix cache (as SageMaker jobs use) is copied to and from by synchronize.",
     "/var/tmp/neuron-compile-cache"},
    {"NEURON_CACHE_COPY_BATCH_BYTES",
     "A copy between an S3 compile cache and a repo stages and commits this many bytes at a time (more for one "
     "bigger entry).",
     "2147483648"},
    {"NEURON_CACHE_COPY_BATCH_FILES", "The same limit in files.", "2000"},
    {"NEURON_CACHE_S3_MULTIPART_THRESHOLD",
     "S3: files of at least this many bytes are uploaded in parts, in parallel (a positive number of bytes).",
     "67108864"},
    {"NEURON_CACHE_S3_PART_SIZE", "S3: the size of each part of a multipart upload, in bytes (at least 5 MiB).",
     "16777216"},
    {"NEURON_CACHE_MAX_FILE_SIZE",
     "Directory repos: a file larger than this many bytes (or a sparse one) is not served, skipped with a warning.",
     "68719476736"},
    {"NEURON_CACHE_S3_STALL_TIMEOUT",
     "S3: seconds a transfer may move less than 1 KiB a second before it is retried (as a dropped connection).", "30"},
    {"NEURON_CACHE_ADD_COMMAND", "The command template add runs when none is given after -- or in the manifest.", ""},
    {"NEURON_CACHE_HTTP_BACKOFF_BASE_MS",
     "Scales HTTP retry delays: the first retry waits this many milliseconds, later ones in proportion.", "1000"},
    {"NEURON_CACHE_MAX_QUOTA_WAIT_S",
     "A push whose Hub commit quota resets within this many seconds waits; a longer wait stops it cleanly.", "300"},
    {"NEURON_CACHE_HUB_MAX_FOLDER_ENTRIES",
     "Entries one Hub folder may hold: a push past it is refused before anything moves.", "10000"},
    {"NEURON_CACHE_HUB_COMMIT_SPACING_MS",
     "Time between two commits of add over a manifest to a Hub repo once its burst is spent.", "30000"},
    {"NEURON_CACHE_HUB_COMMIT_BURST",
     "Commits add over a manifest makes at once before pacing (8 + 3600 s / 30 s = 128 an hour).", "8"},
  };
}

// Where neuron-cache keeps what it remembers, and how it prints.
std::vector<EnvironmentVariable> output_and_state_variables()
{
  return {
    {"XDG_CACHE_HOME",
     "Base of the default HF_HOME and of neuron-cache's own cache ($XDG_CACHE_HOME/neuron-cache: digest cache, "
     "completion data).",
     "~/.cache"},
    {"HF_HUB_DISABLE_PROGRESS_BARS",
     "When 1, ON, YES or TRUE, transfers show no progress (neither the bar drawn on a terminal nor the lines printed "
     "elsewhere).",
     ""},
    {"NEURON_CACHE_PROGRESS_INTERVAL",
     "Seconds between the progress lines a transfer prints where no bar can be drawn (stderr not a terminal, or "
     "TERM=dumb): one when it starts, then one per interval. A decimal number (0.5).",
     "30"},
    {"COLUMNS", "The width tables, help and progress are laid out for; else the terminal's, else 80.", ""},
    {"TERM", "dumb (or unset): progress is printed as plain lines, never redrawn, and nothing is coloured.", ""},
    {"NO_COLOR", "When set and not empty, error and warning labels are not coloured (https://no-color.org).", ""},
    {"XDG_STATE_HOME",
     "Base of neuron-cache's state ($XDG_STATE_HOME/neuron-cache: the last-use records status and cleanup read).",
     "~/.local/state"},
    {"XDG_CONFIG_HOME",
     "Base of neuron-cache's own config file ($XDG_CONFIG_HOME/neuron-cache/repo: a directory or S3 repo chosen by "
     "set).",
     "~/.config"},
  };
}

// S3 repos: the AWS SDKs' credential chain, regions and endpoints.
std::vector<EnvironmentVariable> aws_variables()
{
  return {
    {"AWS_ACCESS_KEY_ID",
     "S3 repos: access key, with AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN (first in the chain).", ""},
    {"AWS_SECRET_ACCESS_KEY", "S3 repos: the secret key that goes with AWS_ACCESS_KEY_ID. Never printed or logged.",
     ""},
    {"AWS_SESSION_TOKEN", "S3 repos: session token of temporary credentials. Never printed or logged.", ""},
    {"AWS_PROFILE",
     "S3 repos: the profile read from the shared credentials and config files (--profile first; also "
     "AWS_DEFAULT_PROFILE).",
     "default"},
    {"AWS_DEFAULT_PROFILE", "S3 repos: the profile when AWS_PROFILE is not set.", "default"},
    {"AWS_SHARED_CREDENTIALS_FILE", "S3 repos: the shared credentials file.", "~/.aws/credentials"},
    {"AWS_CONFIG_FILE", "S3 repos: the shared config file (profiles, region).", "~/.aws/config"},
    {"AWS_REGION", "S3 repos: the region (after --region; then AWS_DEFAULT_REGION, the profile's).", "us-east-1"},
    {"AWS_DEFAULT_REGION", "S3 repos: the region when AWS_REGION is not set.", ""},
    {"AWS_ENDPOINT_URL_S3",
     "S3 repos: the S3 endpoint (after --endpoint-url; then AWS_ENDPOINT_URL, the profile's endpoint_url).", ""},
    {"AWS_ENDPOINT_URL", "S3 repos: the endpoint of every AWS service when AWS_ENDPOINT_URL_S3 is not set.", ""},
    {"AWS_ENDPOINT_URL_STS", "S3 repos: the STS endpoint (roles, web identity, the account in config).", ""},
    {"AWS_ENDPOINT_URL_SSO", "S3 repos: the SSO portal endpoint of SSO profiles.", ""},
    {"AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "S3 repos: when true, endpoints set in variables and profiles are ignored.",
     ""},
    {"AWS_WEB_IDENTITY_TOKEN_FILE",
     "S3 repos: a web identity token (EKS IRSA), exchanged with AWS_ROLE_ARN for the role's credentials.", ""},
    {"AWS_ROLE_ARN", "S3 repos: the role a web identity token assumes.", ""},
    {"AWS_ROLE_SESSION_NAME", "S3 repos: the session name of that role.", "neuron-cache-<time>"},
    {"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
     "S3 repos: container credentials (ECS, SageMaker) at 169.254.170.2 plus this path.", ""},
    {"AWS_CONTAINER_CREDENTIALS_FULL_URI", "S3 repos: container credentials at this URL.", ""},
    {"AWS_CONTAINER_AUTHORIZATION_TOKEN", "S3 repos: the authorization header for the container credentials URL.", ""},
    {"AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", "S3 repos: a file holding that authorization header.", ""},
    {"AWS_EC2_METADATA_SERVICE_ENDPOINT", "S3 repos: the EC2 instance metadata endpoint (IMDSv2).",
     "http://169.254.169.254"},
    {"AWS_EC2_METADATA_DISABLED", "S3 repos: when true, instance metadata is never asked for credentials.", ""},
  };
}

// The system's own.
std::vector<EnvironmentVariable> system_variables()
{
  return {
    {"HOME", "Expands ~ in paths, and is the base of the default cache directories.", ""},
    {"TMPDIR",
     "Where add stages the compile caches of manifest jobs, and copies between an S3 compile cache and a repo "
     "their batches.",
     "/tmp"},
    {"PATH", "Where the commands add runs (and neuronx-cc, for config) are looked up.", ""},
  };
}

} // namespace

const std::vector<EnvironmentVariable>& environment_variables()
{
  // Man-page order: the groups in this order, each in its own.
  static const std::vector<EnvironmentVariable> variables = [] {
    std::vector<EnvironmentVariable> all;
    for (auto group : {hub_variables(), compile_cache_variables(), output_and_state_variables(), aws_variables(),
                       system_variables()}) {
      all.insert(all.end(), group.begin(), group.end());
    }
    return all;
  }();
  return variables;
}

} // namespace neuron_cache
