# fish completion for neuron-cache. Generated from its option table by
# `neuron-cache completion fish`: do not edit; regenerate with `make completions`.
# Turn it on: neuron-cache completion fish > ~/.config/fish/completions/neuron-cache.fish

# Options of command $1 that take a value ($1 is - before the command).
function __neuron_cache_takes_value --argument-names command option
    switch "$command:$option"
        case 'create:-n' 'create:--name' 'create:--token' 'create:--profile' 'create:--region' 'create:--endpoint-url' 'create:--endpoint_url' 'set:-n' 'set:--name' 'set:--token' 'config:--repo-id' 'config:--repo_id' 'config:--cache-dir' 'config:--cache_dir' 'config:--token' 'config:--profile' 'config:--region' 'config:--endpoint-url' 'config:--endpoint_url' 'synchronize:--repo-id' 'synchronize:--repo_id' 'synchronize:--cache-dir' 'synchronize:--cache_dir' 'synchronize:--compiler-version' 'synchronize:--compiler_version' 'synchronize:--model' 'synchronize:--task' 'synchronize:--batch-size' 'synchronize:--batch_size' 'synchronize:--sequence-length' 'synchronize:--sequence_length' 'synchronize:--num-cores' 'synchronize:--num_cores' 'synchronize:--tensor-parallel-size' 'synchronize:--tensor_parallel_size' 'synchronize:--max-size' 'synchronize:--max_size' 'synchronize:--clear-stale-locks' 'synchronize:--clear_stale_locks' 'synchronize:--max-workers' 'synchronize:--max_workers' 'synchronize:--token' 'synchronize:--profile' 'synchronize:--region' 'synchronize:--endpoint-url' 'synchronize:--endpoint_url' 'push:--repo-id' 'push:--repo_id' 'push:--cache-dir' 'push:--cache_dir' 'push:--compiler-version' 'push:--compiler_version' 'push:--clear-stale-locks' 'push:--clear_stale_locks' 'push:--max-workers' 'push:--max_workers' 'push:--token' 'push:--profile' 'push:--region' 'push:--endpoint-url' 'push:--endpoint_url' 'pull:--repo-id' 'pull:--repo_id' 'pull:--cache-dir' 'pull:--cache_dir' 'pull:--compiler-version' 'pull:--compiler_version' 'pull:--model' 'pull:--task' 'pull:--batch-size' 'pull:--batch_size' 'pull:--sequence-length' 'pull:--sequence_length' 'pull:--num-cores' 'pull:--num_cores' 'pull:--tensor-parallel-size' 'pull:--tensor_parallel_size' 'pull:--max-size' 'pull:--max_size' 'pull:--max-workers' 'pull:--max_workers' 'pull:--token' 'pull:--profile' 'pull:--region' 'pull:--endpoint-url' 'pull:--endpoint_url' 'status:--cache-dir' 'status:--cache_dir' 'status:--repo-id' 'status:--repo_id' 'status:--token' 'cleanup:--cache-dir' 'cleanup:--cache_dir' 'cleanup:--keep-version' 'cleanup:--keep_version' 'cleanup:--older-than' 'cleanup:--older_than' 'cleanup:--max-size' 'cleanup:--max_size' 'cleanup:--ttl' 'cleanup:--stale-lock-age' 'cleanup:--stale_lock_age' 'cleanup:--repo-id' 'cleanup:--repo_id' 'cleanup:--token' 'cleanup:--max-workers' 'cleanup:--max_workers' 'lookup:--task' 'lookup:--batch-size' 'lookup:--batch_size' 'lookup:--sequence-length' 'lookup:--sequence_length' 'lookup:--num-cores' 'lookup:--num_cores' 'lookup:--tensor-parallel-size' 'lookup:--tensor_parallel_size' 'lookup:--dtype' 'lookup:--auto-cast-type' 'lookup:--auto_cast_type' 'lookup:--instance-type' 'lookup:--instance_type' 'lookup:-v' 'lookup:--compiler-version' 'lookup:--compiler_version' 'lookup:--registry-version' 'lookup:--registry_version' 'lookup:--mode' 'lookup:--repo-id' 'lookup:--repo_id' 'lookup:--max-workers' 'lookup:--max_workers' 'lookup:--token' 'lookup:--profile' 'lookup:--region' 'lookup:--endpoint-url' 'lookup:--endpoint_url' 'list:-m' 'list:--model' 'list:-v' 'list:--version' 'list:--compiler-version' 'list:--compiler_version' 'list:--repo-id' 'list:--repo_id' 'list:--max-workers' 'list:--max_workers' 'list:--token' 'list:--profile' 'list:--region' 'list:--endpoint-url' 'list:--endpoint_url' 'add:-m' 'add:--model' 'add:--task' 'add:--precision' 'add:--auto-cast-type' 'add:--auto_cast_type' 'add:--num-cores' 'add:--num_cores' 'add:--train-batch-size' 'add:--train_batch_size' 'add:--batch-size' 'add:--batch_size' 'add:--eval-batch-size' 'add:--eval_batch_size' 'add:--sequence-length' 'add:--sequence_length' 'add:--encoder-sequence-length' 'add:--encoder_sequence_length' 'add:--decoder-sequence-length' 'add:--decoder_sequence_length' 'add:--gradient-accumulation-steps' 'add:--gradient_accumulation_steps' 'add:--max-steps' 'add:--max_steps' 'add:--repo-id' 'add:--repo_id' 'add:--cache-dir' 'add:--cache_dir' 'add:--manifest' 'add:-j' 'add:--jobs' 'add:--timeout' 'add:--max-workers' 'add:--max_workers' 'add:--token' 'add:--profile' 'add:--region' 'add:--endpoint-url' 'add:--endpoint_url' 'env:--repo-id' 'env:--repo_id' 'env:--cache-dir' 'env:--cache_dir' 'env:--token' 'env:--profile' 'env:--region' 'env:--endpoint-url' 'env:--endpoint_url' 'sync:--repo-id' 'sync:--repo_id' 'sync:--cache-dir' 'sync:--cache_dir' 'sync:--compiler-version' 'sync:--compiler_version' 'sync:--model' 'sync:--task' 'sync:--batch-size' 'sync:--batch_size' 'sync:--sequence-length' 'sync:--sequence_length' 'sync:--num-cores' 'sync:--num_cores' 'sync:--tensor-parallel-size' 'sync:--tensor_parallel_size' 'sync:--max-size' 'sync:--max_size' 'sync:--clear-stale-locks' 'sync:--clear_stale_locks' 'sync:--max-workers' 'sync:--max_workers' 'sync:--token' 'sync:--profile' 'sync:--region' 'sync:--endpoint-url' 'sync:--endpoint_url' 'ls:-m' 'ls:--model' 'ls:-v' 'ls:--version' 'ls:--compiler-version' 'ls:--compiler_version' 'ls:--repo-id' 'ls:--repo_id' 'ls:--max-workers' 'ls:--max_workers' 'ls:--token' 'ls:--profile' 'ls:--region' 'ls:--endpoint-url' 'ls:--endpoint_url' '*:--format'
            return 0
    end
    return 1
end

# Commands that run another command given after a bare --.
function __neuron_cache_runs_command --argument-names command
    contains -- $command 'add'
end

# The line before the cursor, as two values: the subcommand (- when none yet), then
# where the current word stands: a positional index, "value" (an option's value) or
# "after-dash" (the command given after a bare --).
function __neuron_cache_state
    set -l tokens (commandline -opc)
    set -l command -
    set -l positional 0
    set -l pending 0
    for token in $tokens[2..-1]
        if test $pending = 1
            set pending 0
            continue
        end
        if test "$command" != - -a "x$token" = x--; and __neuron_cache_runs_command $command
            echo $command
            echo after-dash
            return
        end
        if string match -q -- '--*=*' $token
            continue
        end
        if string match -qr -- '^-.' $token
            __neuron_cache_takes_value $command $token; and set pending 1
            continue
        end
        if test "$command" = -
            set command $token
        else
            set positional (math $positional + 1)
        end
    end
    echo $command
    if test $pending = 1
        echo value
    else
        echo $positional
    end
end

function __neuron_cache_needs_command
    set -l state (__neuron_cache_state)
    test "$state[1]" = - -a "$state[2]" = 0
end

function __neuron_cache_using --argument-names command
    set -l state (__neuron_cache_state)
    test "$state[1]" = "$command" -a "$state[2]" != after-dash
end

function __neuron_cache_positional --argument-names command index
    set -l state (__neuron_cache_state)
    test "$state[1]" = "$command" -a "$state[2]" = "$index"
end

function __neuron_cache_after_dash
    set -l state (__neuron_cache_state)
    test "$state[2]" = after-dash
end

# The current word without a leading --option= part.
function __neuron_cache_word
    string replace -r -- '^--[^=]*=' '' (commandline -ct)
end

# Cache repos the user already named: the one `set` saved, and $CUSTOM_CACHE_REPO.
# A path (/..., ~..., file:///...) completes as a directory.
function __neuron_cache_repos
    set -l word (__neuron_cache_word)
    switch "$word"
        case '/*' '~*'
            __fish_complete_directories $word 'Directory repo'
            return
        case 'file://*'
            for dir in (__fish_complete_directories (string replace -- file:// '' $word) 'Directory repo')
                echo file://$dir
            end
            return
    end
    set -l home $HF_HOME
    if test -z "$home"
        set home $XDG_CACHE_HOME
        test -n "$home"; or set home $HOME/.cache
        set home $home/huggingface
    end
    set -l file (string replace -r -- '^~/' "$HOME/" $home)/optimum_neuron_custom_cache
    set -l repos
    set -l config $XDG_CONFIG_HOME
    test -n "$config"; or set config $HOME/.config
    if test -r $config/neuron-cache/repo
        read -l name <$config/neuron-cache/repo
        set -a repos (string trim -- $name)
    end
    if test -r $file
        read -l name <$file
        set -a repos (string trim -- $name)
    end
    set -q CUSTOM_CACHE_REPO; and set -a repos $CUSTOM_CACHE_REPO
    set -l seen
    for repo in $repos
        if test -n "$repo"; and not contains -- $repo $seen
            set -a seen $repo
            printf '%s\tCache repo\n' $repo
        end
    end
end

# Model ids from the listing `neuron-cache list` keeps of the current repo, else a
# local model directory or config.json.
function __neuron_cache_models
    set -l word (__neuron_cache_word)
    set -l base $XDG_CACHE_HOME
    test -n "$base"; or set base $HOME/.cache
    set -l file $base/neuron-cache/completion/models.txt
    if not string match -qr -- '^[/.~]' $word; and test -r $file
        set -l models (string match -rv -- '^\s*$' <$file)
        if string match -q -- "$word*" $models
            printf '%s\tModel id\n' $models
            return
        end
    end
    __fish_complete_path $word
end

# After a bare --: the command to run, completed as fish completes it anywhere.
function __neuron_cache_shell_command
    set -l tokens (commandline -opc) (commandline -ct)
    set -l dash (contains -i -- -- $tokens)
    complete -C (string join ' ' -- (string escape -- $tokens[(math $dash + 1)..-1]))
end

# The common options: before the command or after a known one, not after --.
function __neuron_cache_options_allowed
    set -l state (__neuron_cache_state)
    test "$state[2]" != after-dash; and contains -- $state[1] - 'create' 'set' 'config' 'synchronize' 'push' 'pull' 'status' 'cleanup' 'lookup' 'list' 'add' 'completion' 'man' 'env' 'sync' 'ls'
end

complete -c neuron-cache -f

# Before the command
complete -c neuron-cache -n __neuron_cache_needs_command -a 'create' -d 'Create an empty cache repo and set it as this host\'s cache repo'
complete -c neuron-cache -n __neuron_cache_needs_command -a 'set' -d 'Set the cache repo to use on this host (checks that it exists); alone, show it'
complete -c neuron-cache -n __neuron_cache_needs_command -a 'config' -d 'Show the setup in effect: cache repo and why, Hub, token owner, compile cache, compiler, AWS'
complete -c neuron-cache -n __neuron_cache_needs_command -a 'synchronize' -d 'Push the local Neuron compile cache to the cache repo, or --pull the repo into it'
complete -c neuron-cache -n __neuron_cache_needs_command -a 'push' -d 'Push the local compile cache to the cache repo (synchronize)'
complete -c neuron-cache -n __neuron_cache_needs_command -a 'pull' -d 'Pull the cache repo into the local compile cache (synchronize in reverse)'
complete -c neuron-cache -n __neuron_cache_needs_command -a 'status' -d 'Show what the local Neuron compile cache holds: entries by state, sizes, last use, stale locks'
complete -c neuron-cache -n __neuron_cache_needs_command -a 'cleanup' -d 'Remove failed entries, stale locks and, on request, old or unused entries from the local compile cache'
complete -c neuron-cache -n __neuron_cache_needs_command -a 'lookup' -d 'Show the cached compiled configurations of a model (exit 3 when there are none)'
complete -c neuron-cache -n __neuron_cache_needs_command -a 'list' -d 'List the models a cache repo holds, or every configuration of one model'
complete -c neuron-cache -n __neuron_cache_needs_command -a 'add' -d 'Compile a model configuration (or a manifest of them) and push the result to the cache repo'
complete -c neuron-cache -n __neuron_cache_needs_command -a 'completion' -d 'Print the shell completion script for bash, zsh or fish'
complete -c neuron-cache -n __neuron_cache_needs_command -a 'man' -d 'Print this program\'s manual page (roff, for man)'
complete -c neuron-cache -n __neuron_cache_needs_command -a 'env' -d 'Alias of config: Show the setup in effect: cache repo and why, Hub, token owner, compile cache, compiler, AWS'
complete -c neuron-cache -n __neuron_cache_needs_command -a 'sync' -d 'Alias of synchronize: Push the local Neuron compile cache to the cache repo, or --pull the repo into it'
complete -c neuron-cache -n __neuron_cache_needs_command -a 'ls' -d 'Alias of list: List the models a cache repo holds, or every configuration of one model'
complete -c neuron-cache -n __neuron_cache_needs_command -a help -d 'Show a command\'s options and examples'
complete -c neuron-cache -n '__neuron_cache_needs_command' -s V -l version -d 'Print the version and exit'

# Everywhere but after --
complete -c neuron-cache -n '__neuron_cache_options_allowed' -l format -d 'Output format: human (default), json or quiet' -x -a 'human json quiet'
complete -c neuron-cache -n '__neuron_cache_options_allowed' -l json -d 'Same as --format json'
complete -c neuron-cache -n '__neuron_cache_options_allowed' -s q -l quiet -d 'Same as --format quiet: only essential values, one per line'
complete -c neuron-cache -n '__neuron_cache_options_allowed' -l verbose -d 'Show details (every skipped entry, each step) on standard error'
complete -c neuron-cache -n '__neuron_cache_options_allowed' -s h -l help -d 'Show this help and exit'

# help COMMAND
complete -c neuron-cache -n '__neuron_cache_positional help 0' -a 'create' -d 'Create an empty cache repo and set it as this host\'s cache repo'
complete -c neuron-cache -n '__neuron_cache_positional help 0' -a 'set' -d 'Set the cache repo to use on this host (checks that it exists); alone, show it'
complete -c neuron-cache -n '__neuron_cache_positional help 0' -a 'config' -d 'Show the setup in effect: cache repo and why, Hub, token owner, compile cache, compiler, AWS'
complete -c neuron-cache -n '__neuron_cache_positional help 0' -a 'synchronize' -d 'Push the local Neuron compile cache to the cache repo, or --pull the repo into it'
complete -c neuron-cache -n '__neuron_cache_positional help 0' -a 'push' -d 'Push the local compile cache to the cache repo (synchronize)'
complete -c neuron-cache -n '__neuron_cache_positional help 0' -a 'pull' -d 'Pull the cache repo into the local compile cache (synchronize in reverse)'
complete -c neuron-cache -n '__neuron_cache_positional help 0' -a 'status' -d 'Show what the local Neuron compile cache holds: entries by state, sizes, last use, stale locks'
complete -c neuron-cache -n '__neuron_cache_positional help 0' -a 'cleanup' -d 'Remove failed entries, stale locks and, on request, old or unused entries from the local compile cache'
complete -c neuron-cache -n '__neuron_cache_positional help 0' -a 'lookup' -d 'Show the cached compiled configurations of a model (exit 3 when there are none)'
complete -c neuron-cache -n '__neuron_cache_positional help 0' -a 'list' -d 'List the models a cache repo holds, or every configuration of one model'
complete -c neuron-cache -n '__neuron_cache_positional help 0' -a 'add' -d 'Compile a model configuration (or a manifest of them) and push the result to the cache repo'
complete -c neuron-cache -n '__neuron_cache_positional help 0' -a 'completion' -d 'Print the shell completion script for bash, zsh or fish'
complete -c neuron-cache -n '__neuron_cache_positional help 0' -a 'man' -d 'Print this program\'s manual page (roff, for man)'
complete -c neuron-cache -n '__neuron_cache_positional help 0' -a 'env' -d 'Alias of config: Show the setup in effect: cache repo and why, Hub, token owner, compile cache, compiler, AWS'
complete -c neuron-cache -n '__neuron_cache_positional help 0' -a 'sync' -d 'Alias of synchronize: Push the local Neuron compile cache to the cache repo, or --pull the repo into it'
complete -c neuron-cache -n '__neuron_cache_positional help 0' -a 'ls' -d 'Alias of list: List the models a cache repo holds, or every configuration of one model'

# create
complete -c neuron-cache -n '__neuron_cache_using create' -s n -l name -d 'The repo to create (default: optimum-neuron-cache on the Hub)' -x -a '(__neuron_cache_repos)'
complete -c neuron-cache -n '__neuron_cache_using create' -l public -d 'Make a Hub repo public (default: private)'
complete -c neuron-cache -n '__neuron_cache_using create' -l exist-ok -l exist_ok -d 'Succeed when the repo already exists (still sets it)'
complete -c neuron-cache -n '__neuron_cache_using create' -l no-set -l no_set -d 'Only create: keep this host\'s cache repo as it is (e.g. a repo for CI)'
complete -c neuron-cache -n '__neuron_cache_using create' -l token -d 'Hugging Face token (default: $HF_TOKEN, then the token file in $HF_HOME)' -x
complete -c neuron-cache -n '__neuron_cache_using create' -l profile -d 'AWS profile for S3 repos and compile caches (default: $AWS_PROFILE, then default), as the AWS CLI\'s' -x
complete -c neuron-cache -n '__neuron_cache_using create' -l region -d 'AWS region (default: $AWS_REGION, $AWS_DEFAULT_REGION, the profile\'s region, then us-east-1)' -x
complete -c neuron-cache -n '__neuron_cache_using create' -l endpoint-url -l endpoint_url -d 'S3 endpoint, e.g. of an S3-compatible store (default: $AWS_ENDPOINT_URL_S3, $AWS_ENDPOINT_URL, the profile\'s endpoint_url, then AWS\'s for the region)' -x
complete -c neuron-cache -n '__neuron_cache_using create' -l no-sign-request -l no_sign_request -d 'Send S3 requests unsigned, without looking for credentials: reads public buckets'
complete -c neuron-cache -n '__neuron_cache_using create' -s v -d 'Show details (every skipped entry, each step) on standard error'
complete -c neuron-cache -n '__neuron_cache_positional create 0' -a '(__neuron_cache_repos)' -d 'The repo to create (same as --name)'

# set
complete -c neuron-cache -n '__neuron_cache_using set' -s n -l name -d 'Same as the NAME argument (optimum v0.0.4 form)' -x -a '(__neuron_cache_repos)'
complete -c neuron-cache -n '__neuron_cache_using set' -l unset -d 'Remove the recorded choice (both files)'
complete -c neuron-cache -n '__neuron_cache_using set' -l token -d 'Hugging Face token (default: $HF_TOKEN, then the token file in $HF_HOME)' -x
complete -c neuron-cache -n '__neuron_cache_using set' -s v -d 'Show details (every skipped entry, each step) on standard error'
complete -c neuron-cache -n '__neuron_cache_positional set 0' -a '(__neuron_cache_repos)' -d 'The cache repo: org/name, a directory (/abs/path, ./rel/path, file:///abs/path) or s3://bucket/prefix or hf://buckets/ns/name'

# config
complete -c neuron-cache -n '__neuron_cache_using config' -l repo-id -l repo_id -d 'Cache repo to use: a Hub id (org/name), a directory (/path, file:///path), an S3 prefix (s3://bucket/prefix) or a Storage Bucket (hf://buckets/ns/name[/prefix])' -x -a '(__neuron_cache_repos)'
complete -c neuron-cache -n '__neuron_cache_using config' -l cache-dir -l cache_dir -d 'The local compile cache to report on (default: as the Neuron SDK resolves it)' -x -a '(__fish_complete_directories (__neuron_cache_word))'
complete -c neuron-cache -n '__neuron_cache_using config' -l token -d 'Hugging Face token (default: $HF_TOKEN, then the token file in $HF_HOME)' -x
complete -c neuron-cache -n '__neuron_cache_using config' -l profile -d 'AWS profile for S3 repos and compile caches (default: $AWS_PROFILE, then default), as the AWS CLI\'s' -x
complete -c neuron-cache -n '__neuron_cache_using config' -l region -d 'AWS region (default: $AWS_REGION, $AWS_DEFAULT_REGION, the profile\'s region, then us-east-1)' -x
complete -c neuron-cache -n '__neuron_cache_using config' -l endpoint-url -l endpoint_url -d 'S3 endpoint, e.g. of an S3-compatible store (default: $AWS_ENDPOINT_URL_S3, $AWS_ENDPOINT_URL, the profile\'s endpoint_url, then AWS\'s for the region)' -x
complete -c neuron-cache -n '__neuron_cache_using config' -l no-sign-request -l no_sign_request -d 'Send S3 requests unsigned, without looking for credentials: reads public buckets'
complete -c neuron-cache -n '__neuron_cache_using config' -s v -d 'Show details (every skipped entry, each step) on standard error'

# synchronize
complete -c neuron-cache -n '__neuron_cache_using synchronize' -l repo-id -l repo_id -d 'Cache repo to use: a Hub id (org/name), a directory (/path, file:///path), an S3 prefix (s3://bucket/prefix) or a Storage Bucket (hf://buckets/ns/name[/prefix])' -x -a '(__neuron_cache_repos)'
complete -c neuron-cache -n '__neuron_cache_using synchronize' -l cache-dir -l cache_dir -d 'The local compile cache (default: as the Neuron SDK resolves it)' -x -a '(__fish_complete_directories (__neuron_cache_word))'
complete -c neuron-cache -n '__neuron_cache_using synchronize' -l pull -d 'Download the repo\'s entries into the local cache instead of pushing'
complete -c neuron-cache -n '__neuron_cache_using synchronize' -l compiler-version -l compiler_version -d 'With --pull (or a push from an S3 cache): only entries of this neuronx-cc version (full, or a prefix like 2.15)' -x
complete -c neuron-cache -n '__neuron_cache_using synchronize' -l replace-failed -l replace_failed -d 'With --pull: a complete repo entry replaces a local failed one (else skipped as differing)'
complete -c neuron-cache -n '__neuron_cache_using synchronize' -l model -d 'With --pull: only the graphs of this model\'s cached configurations (Hub id or local directory, as lookup); --compiler-version then defaults to the installed neuronx-cc' -x -a '(__neuron_cache_models)'
complete -c neuron-cache -n '__neuron_cache_using synchronize' -l task -d 'With --model: only configurations of this task' -x
complete -c neuron-cache -n '__neuron_cache_using synchronize' -l batch-size -l batch_size -d 'With --model: only configurations of this batch size' -x
complete -c neuron-cache -n '__neuron_cache_using synchronize' -l sequence-length -l sequence_length -d 'With --model: only configurations of this sequence length' -x
complete -c neuron-cache -n '__neuron_cache_using synchronize' -l num-cores -l num_cores -l tensor-parallel-size -l tensor_parallel_size -d 'With --model: only configurations using this many Neuron cores' -x
complete -c neuron-cache -n '__neuron_cache_using synchronize' -l max-size -l max_size -d 'With --pull: ask (on a terminal) or refuse before downloading more than SIZE (default 20G)' -x
complete -c neuron-cache -n '__neuron_cache_using synchronize' -s y -l yes -d 'With --pull: download even beyond --max-size without asking'
complete -c neuron-cache -n '__neuron_cache_using synchronize' -l dry-run -l dry_run -d 'Print what would be transferred and change nothing'
complete -c neuron-cache -n '__neuron_cache_using synchronize' -l clean-failed -l clean_failed -d 'Before pushing, delete failed entries (model.log without model.neff) from the local cache'
complete -c neuron-cache -n '__neuron_cache_using synchronize' -l clear-stale-locks -l clear_stale_locks -d 'Before pushing, delete *.lock files older than MINUTES, unless a neuronx-cc process runs on this host' -x
complete -c neuron-cache -n '__neuron_cache_using synchronize' -l max-workers -l max_workers -d 'Files transferred (and hashed) at once, each on its own reused connection (default 8, at most 64)' -x
complete -c neuron-cache -n '__neuron_cache_using synchronize' -l no-xet -l no_xet -d 'Move Hub files through Git LFS only, never Xet (as HF_HUB_DISABLE_XET=1)'
complete -c neuron-cache -n '__neuron_cache_using synchronize' -l token -d 'Hugging Face token (default: $HF_TOKEN, then the token file in $HF_HOME)' -x
complete -c neuron-cache -n '__neuron_cache_using synchronize' -l profile -d 'AWS profile for S3 repos and compile caches (default: $AWS_PROFILE, then default), as the AWS CLI\'s' -x
complete -c neuron-cache -n '__neuron_cache_using synchronize' -l region -d 'AWS region (default: $AWS_REGION, $AWS_DEFAULT_REGION, the profile\'s region, then us-east-1)' -x
complete -c neuron-cache -n '__neuron_cache_using synchronize' -l endpoint-url -l endpoint_url -d 'S3 endpoint, e.g. of an S3-compatible store (default: $AWS_ENDPOINT_URL_S3, $AWS_ENDPOINT_URL, the profile\'s endpoint_url, then AWS\'s for the region)' -x
complete -c neuron-cache -n '__neuron_cache_using synchronize' -l no-sign-request -l no_sign_request -d 'Send S3 requests unsigned, without looking for credentials: reads public buckets'
complete -c neuron-cache -n '__neuron_cache_using synchronize' -s v -d 'Show details (every skipped entry, each step) on standard error'

# push
complete -c neuron-cache -n '__neuron_cache_using push' -l repo-id -l repo_id -d 'Cache repo to use: a Hub id (org/name), a directory (/path, file:///path), an S3 prefix (s3://bucket/prefix) or a Storage Bucket (hf://buckets/ns/name[/prefix])' -x -a '(__neuron_cache_repos)'
complete -c neuron-cache -n '__neuron_cache_using push' -l cache-dir -l cache_dir -d 'The local compile cache (default: as the Neuron SDK resolves it)' -x -a '(__fish_complete_directories (__neuron_cache_word))'
complete -c neuron-cache -n '__neuron_cache_using push' -l compiler-version -l compiler_version -d 'Only entries of this neuronx-cc version (full, or a prefix like 2.15)' -x
complete -c neuron-cache -n '__neuron_cache_using push' -l dry-run -l dry_run -d 'Print what would be transferred and change nothing'
complete -c neuron-cache -n '__neuron_cache_using push' -l clean-failed -l clean_failed -d 'Before pushing, delete failed entries (model.log without model.neff) from the local cache'
complete -c neuron-cache -n '__neuron_cache_using push' -l clear-stale-locks -l clear_stale_locks -d 'Before pushing, delete *.lock files older than MINUTES, unless a neuronx-cc process runs on this host' -x
complete -c neuron-cache -n '__neuron_cache_using push' -l max-workers -l max_workers -d 'Files transferred (and hashed) at once, each on its own reused connection (default 8, at most 64)' -x
complete -c neuron-cache -n '__neuron_cache_using push' -l no-xet -l no_xet -d 'Move Hub files through Git LFS only, never Xet (as HF_HUB_DISABLE_XET=1)'
complete -c neuron-cache -n '__neuron_cache_using push' -l token -d 'Hugging Face token (default: $HF_TOKEN, then the token file in $HF_HOME)' -x
complete -c neuron-cache -n '__neuron_cache_using push' -l profile -d 'AWS profile for S3 repos and compile caches (default: $AWS_PROFILE, then default), as the AWS CLI\'s' -x
complete -c neuron-cache -n '__neuron_cache_using push' -l region -d 'AWS region (default: $AWS_REGION, $AWS_DEFAULT_REGION, the profile\'s region, then us-east-1)' -x
complete -c neuron-cache -n '__neuron_cache_using push' -l endpoint-url -l endpoint_url -d 'S3 endpoint, e.g. of an S3-compatible store (default: $AWS_ENDPOINT_URL_S3, $AWS_ENDPOINT_URL, the profile\'s endpoint_url, then AWS\'s for the region)' -x
complete -c neuron-cache -n '__neuron_cache_using push' -l no-sign-request -l no_sign_request -d 'Send S3 requests unsigned, without looking for credentials: reads public buckets'
complete -c neuron-cache -n '__neuron_cache_using push' -s v -d 'Show details (every skipped entry, each step) on standard error'

# pull
complete -c neuron-cache -n '__neuron_cache_using pull' -l repo-id -l repo_id -d 'Cache repo to use: a Hub id (org/name), a directory (/path, file:///path), an S3 prefix (s3://bucket/prefix) or a Storage Bucket (hf://buckets/ns/name[/prefix])' -x -a '(__neuron_cache_repos)'
complete -c neuron-cache -n '__neuron_cache_using pull' -l cache-dir -l cache_dir -d 'The local compile cache (default: as the Neuron SDK resolves it)' -x -a '(__fish_complete_directories (__neuron_cache_word))'
complete -c neuron-cache -n '__neuron_cache_using pull' -l compiler-version -l compiler_version -d 'Only entries of this neuronx-cc version (full, or a prefix like 2.15)' -x
complete -c neuron-cache -n '__neuron_cache_using pull' -l replace-failed -l replace_failed -d 'A complete repo entry replaces a local failed one (else skipped as differing)'
complete -c neuron-cache -n '__neuron_cache_using pull' -l model -d 'Only the graphs of this model\'s cached configurations (Hub id or local directory, as lookup); --compiler-version then defaults to the installed neuronx-cc' -x -a '(__neuron_cache_models)'
complete -c neuron-cache -n '__neuron_cache_using pull' -l task -d 'With --model: only configurations of this task' -x
complete -c neuron-cache -n '__neuron_cache_using pull' -l batch-size -l batch_size -d 'With --model: only configurations of this batch size' -x
complete -c neuron-cache -n '__neuron_cache_using pull' -l sequence-length -l sequence_length -d 'With --model: only configurations of this sequence length' -x
complete -c neuron-cache -n '__neuron_cache_using pull' -l num-cores -l num_cores -l tensor-parallel-size -l tensor_parallel_size -d 'With --model: only configurations using this many Neuron cores' -x
complete -c neuron-cache -n '__neuron_cache_using pull' -l max-size -l max_size -d 'Ask (on a terminal) or refuse before downloading more than SIZE (default 20G)' -x
complete -c neuron-cache -n '__neuron_cache_using pull' -s y -l yes -d 'Download even beyond --max-size without asking'
complete -c neuron-cache -n '__neuron_cache_using pull' -l dry-run -l dry_run -d 'Print what would be transferred and change nothing'
complete -c neuron-cache -n '__neuron_cache_using pull' -l max-workers -l max_workers -d 'Files transferred (and hashed) at once, each on its own reused connection (default 8, at most 64)' -x
complete -c neuron-cache -n '__neuron_cache_using pull' -l no-xet -l no_xet -d 'Move Hub files through Git LFS only, never Xet (as HF_HUB_DISABLE_XET=1)'
complete -c neuron-cache -n '__neuron_cache_using pull' -l token -d 'Hugging Face token (default: $HF_TOKEN, then the token file in $HF_HOME)' -x
complete -c neuron-cache -n '__neuron_cache_using pull' -l profile -d 'AWS profile for S3 repos and compile caches (default: $AWS_PROFILE, then default), as the AWS CLI\'s' -x
complete -c neuron-cache -n '__neuron_cache_using pull' -l region -d 'AWS region (default: $AWS_REGION, $AWS_DEFAULT_REGION, the profile\'s region, then us-east-1)' -x
complete -c neuron-cache -n '__neuron_cache_using pull' -l endpoint-url -l endpoint_url -d 'S3 endpoint, e.g. of an S3-compatible store (default: $AWS_ENDPOINT_URL_S3, $AWS_ENDPOINT_URL, the profile\'s endpoint_url, then AWS\'s for the region)' -x
complete -c neuron-cache -n '__neuron_cache_using pull' -l no-sign-request -l no_sign_request -d 'Send S3 requests unsigned, without looking for credentials: reads public buckets'
complete -c neuron-cache -n '__neuron_cache_using pull' -s v -d 'Show details (every skipped entry, each step) on standard error'

# status
complete -c neuron-cache -n '__neuron_cache_using status' -l cache-dir -l cache_dir -d 'The local compile cache (default: as the Neuron SDK resolves it)' -x -a '(__fish_complete_directories (__neuron_cache_word))'
complete -c neuron-cache -n '__neuron_cache_using status' -l repo -d 'Also tell which entries the cache repo in effect holds (needs the repo)'
complete -c neuron-cache -n '__neuron_cache_using status' -l repo-id -l repo_id -d 'Cache repo to use: a Hub id (org/name), a directory (/path, file:///path), an S3 prefix (s3://bucket/prefix) or a Storage Bucket (hf://buckets/ns/name[/prefix])' -x -a '(__neuron_cache_repos)'
complete -c neuron-cache -n '__neuron_cache_using status' -l token -d 'Hugging Face token (default: $HF_TOKEN, then the token file in $HF_HOME)' -x
complete -c neuron-cache -n '__neuron_cache_using status' -s v -d 'Show details (every skipped entry, each step) on standard error'

# cleanup
complete -c neuron-cache -n '__neuron_cache_using cleanup' -l cache-dir -l cache_dir -d 'The local compile cache (default: as the Neuron SDK resolves it)' -x -a '(__fish_complete_directories (__neuron_cache_word))'
complete -c neuron-cache -n '__neuron_cache_using cleanup' -l all -d 'Also remove incomplete entries (no model.neff or model.done, flags mismatch)'
complete -c neuron-cache -n '__neuron_cache_using cleanup' -l old-versions -l old_versions -d 'Also remove every neuronxcc-* directory but the installed compiler\'s (the version neuronx-cc reports)'
complete -c neuron-cache -n '__neuron_cache_using cleanup' -l keep-version -l keep_version -d 'With --old-versions: keep this compiler version instead (full, or a prefix like 2.21)' -x
complete -c neuron-cache -n '__neuron_cache_using cleanup' -l older-than -l older_than -d 'Also remove entries not used for AGE (e.g. 30d); with --repo, entries and registry files the repo last changed before AGE (commit dates on the Hub, mtimes in a directory, LastModified on S3)' -x
complete -c neuron-cache -n '__neuron_cache_using cleanup' -l max-size -l max_size -d 'Also evict least recently used entries until the cache fits SIZE (e.g. 100G), sparing those used within --ttl' -x
complete -c neuron-cache -n '__neuron_cache_using cleanup' -l ttl -d 'With --max-size: never evict an entry used within AGE (default 30d)' -x
complete -c neuron-cache -n '__neuron_cache_using cleanup' -l evict -d 'Apply the Neuron SDK policy: cache_size (bytes) and cache_ttl (days) from NEURON_CC_FLAGS, else 100 GiB and 30 days'
complete -c neuron-cache -n '__neuron_cache_using cleanup' -l stale-lock-age -l stale_lock_age -d 'Treat a lock as stale only when older than AGE' -x
complete -c neuron-cache -n '__neuron_cache_using cleanup' -l wipe -d 'Remove everything in the cache (asks on a terminal unless --yes)'
complete -c neuron-cache -n '__neuron_cache_using cleanup' -l repo -d 'Prune the cache repo instead of the local cache: failed entries, with --all incomplete ones, with --old-versions every version but --keep-version\'s, with --older-than and --unregistered those; registry entries naming a removed graph go too; one commit (asks unless --yes)'
complete -c neuron-cache -n '__neuron_cache_using cleanup' -l unregistered -d 'With --repo: also remove the graphs no registry entry names (the unregistered graphs \'list\' counts)'
complete -c neuron-cache -n '__neuron_cache_using cleanup' -l repo-id -l repo_id -d 'Cache repo to use: a Hub id (org/name), a directory (/path, file:///path), an S3 prefix (s3://bucket/prefix) or a Storage Bucket (hf://buckets/ns/name[/prefix])' -x -a '(__neuron_cache_repos)'
complete -c neuron-cache -n '__neuron_cache_using cleanup' -l token -d 'Hugging Face token (default: $HF_TOKEN, then the token file in $HF_HOME)' -x
complete -c neuron-cache -n '__neuron_cache_using cleanup' -l max-workers -l max_workers -d 'Files transferred (and hashed) at once, each on its own reused connection (default 8, at most 64)' -x
complete -c neuron-cache -n '__neuron_cache_using cleanup' -s y -l yes -d 'Do not ask before --wipe or --repo'
complete -c neuron-cache -n '__neuron_cache_using cleanup' -l dry-run -l dry_run -d 'List what would be removed, with size and reason, and change nothing'
complete -c neuron-cache -n '__neuron_cache_using cleanup' -s v -d 'Show details (every skipped entry, each step) on standard error'

# lookup
complete -c neuron-cache -n '__neuron_cache_using lookup' -l task -d 'Only entries compiled for this task (e.g. text-generation)' -x
complete -c neuron-cache -n '__neuron_cache_using lookup' -l batch-size -l batch_size -d 'Only entries with this batch size' -x
complete -c neuron-cache -n '__neuron_cache_using lookup' -l sequence-length -l sequence_length -d 'Only entries with this sequence length' -x
complete -c neuron-cache -n '__neuron_cache_using lookup' -l num-cores -l num_cores -l tensor-parallel-size -l tensor_parallel_size -d 'Only entries using this many Neuron cores (tensor parallel degree)' -x
complete -c neuron-cache -n '__neuron_cache_using lookup' -l dtype -l auto-cast-type -l auto_cast_type -d 'Only entries with this dtype (bfloat16, float16, bf16, fp16...)' -x
complete -c neuron-cache -n '__neuron_cache_using lookup' -l instance-type -l instance_type -d 'Only entries for this instance type' -x -a 'trn1 inf2 trn1n trn2'
complete -c neuron-cache -n '__neuron_cache_using lookup' -s v -l compiler-version -l compiler_version -d 'Only entries of this neuronx-cc version, or a prefix of it at a \'.\' or \'+\' (2.21)' -x
complete -c neuron-cache -n '__neuron_cache_using lookup' -l registry-version -l registry_version -d 'Only entries written by this optimum-neuron version (the 0_REGISTRY/<version> folder)' -x
complete -c neuron-cache -n '__neuron_cache_using lookup' -l optimum -d 'Give optimum-neuron main\'s own answer: its task, compiler pin and registry version only, exit 0 on a miss'
complete -c neuron-cache -n '__neuron_cache_using lookup' -l mode -d 'Only training or inference entries (optimum 0.0.19 - 0.1.x); default all' -x -a 'training inference all'
complete -c neuron-cache -n '__neuron_cache_using lookup' -l table -d 'Print a wide table (compiler version and model too) instead of optimum\'s'
complete -c neuron-cache -n '__neuron_cache_using lookup' -l blocks -d 'Print optimum <= 0.3\'s \'*** N entries found ***\' key: value blocks instead of its table'
complete -c neuron-cache -n '__neuron_cache_using lookup' -l repo-id -l repo_id -d 'Cache repo to use: a Hub id (org/name), a directory (/path, file:///path), an S3 prefix (s3://bucket/prefix) or a Storage Bucket (hf://buckets/ns/name[/prefix])' -x -a '(__neuron_cache_repos)'
complete -c neuron-cache -n '__neuron_cache_using lookup' -l max-workers -l max_workers -d 'Files transferred (and hashed) at once, each on its own reused connection (default 8, at most 64)' -x
complete -c neuron-cache -n '__neuron_cache_using lookup' -l token -d 'Hugging Face token (default: $HF_TOKEN, then the token file in $HF_HOME)' -x
complete -c neuron-cache -n '__neuron_cache_using lookup' -l profile -d 'AWS profile for S3 repos and compile caches (default: $AWS_PROFILE, then default), as the AWS CLI\'s' -x
complete -c neuron-cache -n '__neuron_cache_using lookup' -l region -d 'AWS region (default: $AWS_REGION, $AWS_DEFAULT_REGION, the profile\'s region, then us-east-1)' -x
complete -c neuron-cache -n '__neuron_cache_using lookup' -l endpoint-url -l endpoint_url -d 'S3 endpoint, e.g. of an S3-compatible store (default: $AWS_ENDPOINT_URL_S3, $AWS_ENDPOINT_URL, the profile\'s endpoint_url, then AWS\'s for the region)' -x
complete -c neuron-cache -n '__neuron_cache_using lookup' -l no-sign-request -l no_sign_request -d 'Send S3 requests unsigned, without looking for credentials: reads public buckets'
complete -c neuron-cache -n '__neuron_cache_positional lookup 0' -a '(__neuron_cache_models)' -d 'Model directory, config.json file or Hub model id'

# list
complete -c neuron-cache -n '__neuron_cache_using list' -s m -l model -d 'List every configuration of this model id' -x -a '(__neuron_cache_models)'
complete -c neuron-cache -n '__neuron_cache_using list' -l graphs -d 'List the compiled graphs no registry entry names (no model registers)'
complete -c neuron-cache -n '__neuron_cache_using list' -s v -l version -l compiler-version -l compiler_version -d 'Only this neuronx-cc version, or a prefix of it at a \'.\' or \'+\' (2.21)' -x
complete -c neuron-cache -n '__neuron_cache_using list' -l repo-id -l repo_id -d 'Cache repo to use: a Hub id (org/name), a directory (/path, file:///path), an S3 prefix (s3://bucket/prefix) or a Storage Bucket (hf://buckets/ns/name[/prefix])' -x -a '(__neuron_cache_repos)'
complete -c neuron-cache -n '__neuron_cache_using list' -l max-workers -l max_workers -d 'Files transferred (and hashed) at once, each on its own reused connection (default 8, at most 64)' -x
complete -c neuron-cache -n '__neuron_cache_using list' -l token -d 'Hugging Face token (default: $HF_TOKEN, then the token file in $HF_HOME)' -x
complete -c neuron-cache -n '__neuron_cache_using list' -l profile -d 'AWS profile for S3 repos and compile caches (default: $AWS_PROFILE, then default), as the AWS CLI\'s' -x
complete -c neuron-cache -n '__neuron_cache_using list' -l region -d 'AWS region (default: $AWS_REGION, $AWS_DEFAULT_REGION, the profile\'s region, then us-east-1)' -x
complete -c neuron-cache -n '__neuron_cache_using list' -l endpoint-url -l endpoint_url -d 'S3 endpoint, e.g. of an S3-compatible store (default: $AWS_ENDPOINT_URL_S3, $AWS_ENDPOINT_URL, the profile\'s endpoint_url, then AWS\'s for the region)' -x
complete -c neuron-cache -n '__neuron_cache_using list' -l no-sign-request -l no_sign_request -d 'Send S3 requests unsigned, without looking for credentials: reads public buckets'
complete -c neuron-cache -n '__neuron_cache_positional list 0' -a '(__neuron_cache_repos)' -d 'The cache repo to list (default: as --repo-id resolves)'

# add
complete -c neuron-cache -n '__neuron_cache_using add' -s m -l model -d 'Hub model id or local model directory (with config.json)' -x -a '(__neuron_cache_models)'
complete -c neuron-cache -n '__neuron_cache_using add' -l task -d 'Task, e.g. text-generation, text-classification' -x
complete -c neuron-cache -n '__neuron_cache_using add' -l precision -d 'fp, bf16 or fp16: the model\'s dtype (torch_dtype in the registry entry)' -x -a 'fp bf16 fp16'
complete -c neuron-cache -n '__neuron_cache_using add' -l auto-cast-type -l auto_cast_type -d 'bf16, fp16, tf32 or fp32: what the compiler casts fp32 operations to, recorded as optimum\'s exports record it (auto_cast_type); without --precision, the dtype lookup shows' -x -a 'bf16 fp16 tf32 fp32'
complete -c neuron-cache -n '__neuron_cache_using add' -l num-cores -l num_cores -d 'Neuron cores the run uses' -x
complete -c neuron-cache -n '__neuron_cache_using add' -l train-batch-size -l train_batch_size -l batch-size -l batch_size -d 'Batch size: the training batch size, or an inference model\'s static batch size' -x
complete -c neuron-cache -n '__neuron_cache_using add' -l eval-batch-size -l eval_batch_size -d 'Evaluation batch size (default: the train batch size)' -x
complete -c neuron-cache -n '__neuron_cache_using add' -l sequence-length -l sequence_length -d 'Sequence length' -x
complete -c neuron-cache -n '__neuron_cache_using add' -l encoder-sequence-length -l encoder_sequence_length -d 'Encoder sequence length (encoder-decoder models)' -x
complete -c neuron-cache -n '__neuron_cache_using add' -l decoder-sequence-length -l decoder_sequence_length -d 'Decoder sequence length (encoder-decoder models)' -x
complete -c neuron-cache -n '__neuron_cache_using add' -l gradient-accumulation-steps -l gradient_accumulation_steps -d 'Gradient accumulation steps (default 1)' -x
complete -c neuron-cache -n '__neuron_cache_using add' -l max-steps -l max_steps -d 'Training steps of the run (default 10)' -x
complete -c neuron-cache -n '__neuron_cache_using add' -l repo-id -l repo_id -d 'Cache repo to use: a Hub id (org/name), a directory (/path, file:///path), an S3 prefix (s3://bucket/prefix) or a Storage Bucket (hf://buckets/ns/name[/prefix])' -x -a '(__neuron_cache_repos)'
complete -c neuron-cache -n '__neuron_cache_using add' -l cache-dir -l cache_dir -d 'Local compile cache root (default: --cache_dir in NEURON_CC_FLAGS, NEURON_COMPILE_CACHE_URL, /var/tmp/neuron-compile-cache)' -x -a '(__fish_complete_directories (__neuron_cache_word))'
complete -c neuron-cache -n '__neuron_cache_using add' -l manifest -d 'Add every configuration of a YAML manifest' -r -F
complete -c neuron-cache -n '__neuron_cache_using add' -s j -l jobs -d 'Manifest configurations compiled at a time (default 1)' -x
complete -c neuron-cache -n '__neuron_cache_using add' -l dry-run -l dry_run -d 'Show what would be compiled and pushed; change nothing'
complete -c neuron-cache -n '__neuron_cache_using add' -l continue-on-error -l continue_on_error -d 'Keep going after a configuration fails (manifest)'
complete -c neuron-cache -n '__neuron_cache_using add' -l force -d 'Compile even configurations the repo already registers'
complete -c neuron-cache -n '__neuron_cache_using add' -l timeout -d 'Terminate a command running longer than this' -x
complete -c neuron-cache -n '__neuron_cache_using add' -l max-workers -l max_workers -d 'Files transferred (and hashed) at once, each on its own reused connection (default 8, at most 64)' -x
complete -c neuron-cache -n '__neuron_cache_using add' -l no-xet -l no_xet -d 'Move Hub files through Git LFS only, never Xet (as HF_HUB_DISABLE_XET=1)'
complete -c neuron-cache -n '__neuron_cache_using add' -l token -d 'Hugging Face token (default: $HF_TOKEN, then the token file in $HF_HOME)' -x
complete -c neuron-cache -n '__neuron_cache_using add' -l profile -d 'AWS profile for S3 repos and compile caches (default: $AWS_PROFILE, then default), as the AWS CLI\'s' -x
complete -c neuron-cache -n '__neuron_cache_using add' -l region -d 'AWS region (default: $AWS_REGION, $AWS_DEFAULT_REGION, the profile\'s region, then us-east-1)' -x
complete -c neuron-cache -n '__neuron_cache_using add' -l endpoint-url -l endpoint_url -d 'S3 endpoint, e.g. of an S3-compatible store (default: $AWS_ENDPOINT_URL_S3, $AWS_ENDPOINT_URL, the profile\'s endpoint_url, then AWS\'s for the region)' -x
complete -c neuron-cache -n '__neuron_cache_using add' -l no-sign-request -l no_sign_request -d 'Send S3 requests unsigned, without looking for credentials: reads public buckets'
complete -c neuron-cache -n '__neuron_cache_using add' -s v -d 'Show details (every skipped entry, each step) on standard error'
complete -c neuron-cache -n __neuron_cache_after_dash -a '(__neuron_cache_shell_command)'

# completion
complete -c neuron-cache -n '__neuron_cache_using completion' -s v -d 'Show details (every skipped entry, each step) on standard error'
complete -c neuron-cache -n '__neuron_cache_positional completion 0' -a 'bash zsh fish' -d 'bash, zsh or fish'

# man
complete -c neuron-cache -n '__neuron_cache_using man' -s v -d 'Show details (every skipped entry, each step) on standard error'

# env
complete -c neuron-cache -n '__neuron_cache_using env' -l repo-id -l repo_id -d 'Cache repo to use: a Hub id (org/name), a directory (/path, file:///path), an S3 prefix (s3://bucket/prefix) or a Storage Bucket (hf://buckets/ns/name[/prefix])' -x -a '(__neuron_cache_repos)'
complete -c neuron-cache -n '__neuron_cache_using env' -l cache-dir -l cache_dir -d 'The local compile cache to report on (default: as the Neuron SDK resolves it)' -x -a '(__fish_complete_directories (__neuron_cache_word))'
complete -c neuron-cache -n '__neuron_cache_using env' -l token -d 'Hugging Face token (default: $HF_TOKEN, then the token file in $HF_HOME)' -x
complete -c neuron-cache -n '__neuron_cache_using env' -l profile -d 'AWS profile for S3 repos and compile caches (default: $AWS_PROFILE, then default), as the AWS CLI\'s' -x
complete -c neuron-cache -n '__neuron_cache_using env' -l region -d 'AWS region (default: $AWS_REGION, $AWS_DEFAULT_REGION, the profile\'s region, then us-east-1)' -x
complete -c neuron-cache -n '__neuron_cache_using env' -l endpoint-url -l endpoint_url -d 'S3 endpoint, e.g. of an S3-compatible store (default: $AWS_ENDPOINT_URL_S3, $AWS_ENDPOINT_URL, the profile\'s endpoint_url, then AWS\'s for the region)' -x
complete -c neuron-cache -n '__neuron_cache_using env' -l no-sign-request -l no_sign_request -d 'Send S3 requests unsigned, without looking for credentials: reads public buckets'
complete -c neuron-cache -n '__neuron_cache_using env' -s v -d 'Show details (every skipped entry, each step) on standard error'

# sync
complete -c neuron-cache -n '__neuron_cache_using sync' -l repo-id -l repo_id -d 'Cache repo to use: a Hub id (org/name), a directory (/path, file:///path), an S3 prefix (s3://bucket/prefix) or a Storage Bucket (hf://buckets/ns/name[/prefix])' -x -a '(__neuron_cache_repos)'
complete -c neuron-cache -n '__neuron_cache_using sync' -l cache-dir -l cache_dir -d 'The local compile cache (default: as the Neuron SDK resolves it)' -x -a '(__fish_complete_directories (__neuron_cache_word))'
complete -c neuron-cache -n '__neuron_cache_using sync' -l pull -d 'Download the repo\'s entries into the local cache instead of pushing'
complete -c neuron-cache -n '__neuron_cache_using sync' -l compiler-version -l compiler_version -d 'With --pull (or a push from an S3 cache): only entries of this neuronx-cc version (full, or a prefix like 2.15)' -x
complete -c neuron-cache -n '__neuron_cache_using sync' -l replace-failed -l replace_failed -d 'With --pull: a complete repo entry replaces a local failed one (else skipped as differing)'
complete -c neuron-cache -n '__neuron_cache_using sync' -l model -d 'With --pull: only the graphs of this model\'s cached configurations (Hub id or local directory, as lookup); --compiler-version then defaults to the installed neuronx-cc' -x -a '(__neuron_cache_models)'
complete -c neuron-cache -n '__neuron_cache_using sync' -l task -d 'With --model: only configurations of this task' -x
complete -c neuron-cache -n '__neuron_cache_using sync' -l batch-size -l batch_size -d 'With --model: only configurations of this batch size' -x
complete -c neuron-cache -n '__neuron_cache_using sync' -l sequence-length -l sequence_length -d 'With --model: only configurations of this sequence length' -x
complete -c neuron-cache -n '__neuron_cache_using sync' -l num-cores -l num_cores -l tensor-parallel-size -l tensor_parallel_size -d 'With --model: only configurations using this many Neuron cores' -x
complete -c neuron-cache -n '__neuron_cache_using sync' -l max-size -l max_size -d 'With --pull: ask (on a terminal) or refuse before downloading more than SIZE (default 20G)' -x
complete -c neuron-cache -n '__neuron_cache_using sync' -s y -l yes -d 'With --pull: download even beyond --max-size without asking'
complete -c neuron-cache -n '__neuron_cache_using sync' -l dry-run -l dry_run -d 'Print what would be transferred and change nothing'
complete -c neuron-cache -n '__neuron_cache_using sync' -l clean-failed -l clean_failed -d 'Before pushing, delete failed entries (model.log without model.neff) from the local cache'
complete -c neuron-cache -n '__neuron_cache_using sync' -l clear-stale-locks -l clear_stale_locks -d 'Before pushing, delete *.lock files older than MINUTES, unless a neuronx-cc process runs on this host' -x
complete -c neuron-cache -n '__neuron_cache_using sync' -l max-workers -l max_workers -d 'Files transferred (and hashed) at once, each on its own reused connection (default 8, at most 64)' -x
complete -c neuron-cache -n '__neuron_cache_using sync' -l no-xet -l no_xet -d 'Move Hub files through Git LFS only, never Xet (as HF_HUB_DISABLE_XET=1)'
complete -c neuron-cache -n '__neuron_cache_using sync' -l token -d 'Hugging Face token (default: $HF_TOKEN, then the token file in $HF_HOME)' -x
complete -c neuron-cache -n '__neuron_cache_using sync' -l profile -d 'AWS profile for S3 repos and compile caches (default: $AWS_PROFILE, then default), as the AWS CLI\'s' -x
complete -c neuron-cache -n '__neuron_cache_using sync' -l region -d 'AWS region (default: $AWS_REGION, $AWS_DEFAULT_REGION, the profile\'s region, then us-east-1)' -x
complete -c neuron-cache -n '__neuron_cache_using sync' -l endpoint-url -l endpoint_url -d 'S3 endpoint, e.g. of an S3-compatible store (default: $AWS_ENDPOINT_URL_S3, $AWS_ENDPOINT_URL, the profile\'s endpoint_url, then AWS\'s for the region)' -x
complete -c neuron-cache -n '__neuron_cache_using sync' -l no-sign-request -l no_sign_request -d 'Send S3 requests unsigned, without looking for credentials: reads public buckets'
complete -c neuron-cache -n '__neuron_cache_using sync' -s v -d 'Show details (every skipped entry, each step) on standard error'

# ls
complete -c neuron-cache -n '__neuron_cache_using ls' -s m -l model -d 'List every configuration of this model id' -x -a '(__neuron_cache_models)'
complete -c neuron-cache -n '__neuron_cache_using ls' -l graphs -d 'List the compiled graphs no registry entry names (no model registers)'
complete -c neuron-cache -n '__neuron_cache_using ls' -s v -l version -l compiler-version -l compiler_version -d 'Only this neuronx-cc version, or a prefix of it at a \'.\' or \'+\' (2.21)' -x
complete -c neuron-cache -n '__neuron_cache_using ls' -l repo-id -l repo_id -d 'Cache repo to use: a Hub id (org/name), a directory (/path, file:///path), an S3 prefix (s3://bucket/prefix) or a Storage Bucket (hf://buckets/ns/name[/prefix])' -x -a '(__neuron_cache_repos)'
complete -c neuron-cache -n '__neuron_cache_using ls' -l max-workers -l max_workers -d 'Files transferred (and hashed) at once, each on its own reused connection (default 8, at most 64)' -x
complete -c neuron-cache -n '__neuron_cache_using ls' -l token -d 'Hugging Face token (default: $HF_TOKEN, then the token file in $HF_HOME)' -x
complete -c neuron-cache -n '__neuron_cache_using ls' -l profile -d 'AWS profile for S3 repos and compile caches (default: $AWS_PROFILE, then default), as the AWS CLI\'s' -x
complete -c neuron-cache -n '__neuron_cache_using ls' -l region -d 'AWS region (default: $AWS_REGION, $AWS_DEFAULT_REGION, the profile\'s region, then us-east-1)' -x
complete -c neuron-cache -n '__neuron_cache_using ls' -l endpoint-url -l endpoint_url -d 'S3 endpoint, e.g. of an S3-compatible store (default: $AWS_ENDPOINT_URL_S3, $AWS_ENDPOINT_URL, the profile\'s endpoint_url, then AWS\'s for the region)' -x
complete -c neuron-cache -n '__neuron_cache_using ls' -l no-sign-request -l no_sign_request -d 'Send S3 requests unsigned, without looking for credentials: reads public buckets'
complete -c neuron-cache -n '__neuron_cache_positional ls 0' -a '(__neuron_cache_repos)' -d 'The cache repo to list (default: as --repo-id resolves)'
