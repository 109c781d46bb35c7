# bash completion for neuron-cache. Generated from its option table by
# `neuron-cache completion bash`: do not edit; regenerate with `make completions`.
# Turn it on: source <(neuron-cache completion bash), or install it as
# share/bash-completion/completions/neuron-cache (cmake --install does).

_neuron_cache_commands='create set config synchronize push pull status cleanup lookup list add completion man env sync ls help'

# Sets _nc_kind (and _nc_choices) for option $2 of command $1 ("" before the command);
# fails for an unknown option.
_neuron_cache_option() {
  _nc_kind= _nc_choices=
  case "$1:$2" in
    create:-n | create:--name) _nc_kind=repo ;;
    create:--public) _nc_kind=flag ;;
    create:--exist-ok | create:--exist_ok) _nc_kind=flag ;;
    create:--no-set | create:--no_set) _nc_kind=flag ;;
    create:--token) _nc_kind=text ;;
    create:--profile) _nc_kind=text ;;
    create:--region) _nc_kind=text ;;
    create:--endpoint-url | create:--endpoint_url) _nc_kind=text ;;
    create:--no-sign-request | create:--no_sign_request) _nc_kind=flag ;;
    create:-v) _nc_kind=flag ;;
    set:-n | set:--name) _nc_kind=repo ;;
    set:--unset) _nc_kind=flag ;;
    set:--token) _nc_kind=text ;;
    set:-v) _nc_kind=flag ;;
    config:--repo-id | config:--repo_id) _nc_kind=repo ;;
    config:--cache-dir | config:--cache_dir) _nc_kind=directory ;;
    config:--token) _nc_kind=text ;;
    config:--profile) _nc_kind=text ;;
    config:--region) _nc_kind=text ;;
    config:--endpoint-url | config:--endpoint_url) _nc_kind=text ;;
    config:--no-sign-request | config:--no_sign_request) _nc_kind=flag ;;
    config:-v) _nc_kind=flag ;;
    synchronize:--repo-id | synchronize:--repo_id) _nc_kind=repo ;;
    synchronize:--cache-dir | synchronize:--cache_dir) _nc_kind=directory ;;
    synchronize:--pull) _nc_kind=flag ;;
    synchronize:--compiler-version | synchronize:--compiler_version) _nc_kind=text ;;
    synchronize:--replace-failed | synchronize:--replace_failed) _nc_kind=flag ;;
    synchronize:--model) _nc_kind=model ;;
    synchronize:--task) _nc_kind=text ;;
    synchronize:--batch-size | synchronize:--batch_size) _nc_kind=integer ;;
    synchronize:--sequence-length | synchronize:--sequence_length) _nc_kind=integer ;;
    synchronize:--num-cores | synchronize:--num_cores | synchronize:--tensor-parallel-size | synchronize:--tensor_parallel_size) _nc_kind=integer ;;
    synchronize:--max-size | synchronize:--max_size) _nc_kind=text ;;
    synchronize:-y | synchronize:--yes) _nc_kind=flag ;;
    synchronize:--dry-run | synchronize:--dry_run) _nc_kind=flag ;;
    synchronize:--clean-failed | synchronize:--clean_failed) _nc_kind=flag ;;
    synchronize:--clear-stale-locks | synchronize:--clear_stale_locks) _nc_kind=integer ;;
    synchronize:--max-workers | synchronize:--max_workers) _nc_kind=integer ;;
    synchronize:--no-xet | synchronize:--no_xet) _nc_kind=flag ;;
    synchronize:--token) _nc_kind=text ;;
    synchronize:--profile) _nc_kind=text ;;
    synchronize:--region) _nc_kind=text ;;
    synchronize:--endpoint-url | synchronize:--endpoint_url) _nc_kind=text ;;
    synchronize:--no-sign-request | synchronize:--no_sign_request) _nc_kind=flag ;;
    synchronize:-v) _nc_kind=flag ;;
    push:--repo-id | push:--repo_id) _nc_kind=repo ;;
    push:--cache-dir | push:--cache_dir) _nc_kind=directory ;;
    push:--compiler-version | push:--compiler_version) _nc_kind=text ;;
    push:--dry-run | push:--dry_run) _nc_kind=flag ;;
    push:--clean-failed | push:--clean_failed) _nc_kind=flag ;;
    push:--clear-stale-locks | push:--clear_stale_locks) _nc_kind=integer ;;
    push:--max-workers | push:--max_workers) _nc_kind=integer ;;
    push:--no-xet | push:--no_xet) _nc_kind=flag ;;
    push:--token) _nc_kind=text ;;
    push:--profile) _nc_kind=text ;;
    push:--region) _nc_kind=text ;;
    push:--endpoint-url | push:--endpoint_url) _nc_kind=text ;;
    push:--no-sign-request | push:--no_sign_request) _nc_kind=flag ;;
    push:-v) _nc_kind=flag ;;
    pull:--repo-id | pull:--repo_id) _nc_kind=repo ;;
    pull:--cache-dir | pull:--cache_dir) _nc_kind=directory ;;
    pull:--compiler-version | pull:--compiler_version) _nc_kind=text ;;
    pull:--replace-failed | pull:--replace_failed) _nc_kind=flag ;;
    pull:--model) _nc_kind=model ;;
    pull:--task) _nc_kind=text ;;
    pull:--batch-size | pull:--batch_size) _nc_kind=integer ;;
    pull:--sequence-length | pull:--sequence_length) _nc_kind=integer ;;
    pull:--num-cores | pull:--num_cores | pull:--tensor-parallel-size | pull:--tensor_parallel_size) _nc_kind=integer ;;
    pull:--max-size | pull:--max_size) _nc_kind=text ;;
    pull:-y | pull:--yes) _nc_kind=flag ;;
    pull:--dry-run | pull:--dry_run) _nc_kind=flag ;;
    pull:--max-workers | pull:--max_workers) _nc_kind=integer ;;
    pull:--no-xet | pull:--no_xet) _nc_kind=flag ;;
    pull:--token) _nc_kind=text ;;
    pull:--profile) _nc_kind=text ;;
    pull:--region) _nc_kind=text ;;
    pull:--endpoint-url | pull:--endpoint_url) _nc_kind=text ;;
    pull:--no-sign-request | pull:--no_sign_request) _nc_kind=flag ;;
    pull:-v) _nc_kind=flag ;;
    status:--cache-dir | status:--cache_dir) _nc_kind=directory ;;
    status:--repo) _nc_kind=flag ;;
    status:--repo-id | status:--repo_id) _nc_kind=repo ;;
    status:--token) _nc_kind=text ;;
    status:-v) _nc_kind=flag ;;
    cleanup:--cache-dir | cleanup:--cache_dir) _nc_kind=directory ;;
    cleanup:--all) _nc_kind=flag ;;
    cleanup:--old-versions | cleanup:--old_versions) _nc_kind=flag ;;
    cleanup:--keep-version | cleanup:--keep_version) _nc_kind=text ;;
    cleanup:--older-than | cleanup:--older_than) _nc_kind=text ;;
    cleanup:--max-size | cleanup:--max_size) _nc_kind=text ;;
    cleanup:--ttl) _nc_kind=text ;;
    cleanup:--evict) _nc_kind=flag ;;
    cleanup:--stale-lock-age | cleanup:--stale_lock_age) _nc_kind=text ;;
    cleanup:--wipe) _nc_kind=flag ;;
    cleanup:--repo) _nc_kind=flag ;;
    cleanup:--unregistered) _nc_kind=flag ;;
    cleanup:--repo-id | cleanup:--repo_id) _nc_kind=repo ;;
    cleanup:--token) _nc_kind=text ;;
    cleanup:--max-workers | cleanup:--max_workers) _nc_kind=integer ;;
    cleanup:-y | cleanup:--yes) _nc_kind=flag ;;
    cleanup:--dry-run | cleanup:--dry_run) _nc_kind=flag ;;
    cleanup:-v) _nc_kind=flag ;;
    lookup:--task) _nc_kind=text ;;
    lookup:--batch-size | lookup:--batch_size) _nc_kind=integer ;;
    lookup:--sequence-length | lookup:--sequence_length) _nc_kind=integer ;;
    lookup:--num-cores | lookup:--num_cores | lookup:--tensor-parallel-size | lookup:--tensor_parallel_size) _nc_kind=integer ;;
    lookup:--dtype | lookup:--auto-cast-type | lookup:--auto_cast_type) _nc_kind=text ;;
    lookup:--instance-type | lookup:--instance_type) _nc_kind=choice _nc_choices='trn1 inf2 trn1n trn2' ;;
    lookup:-v | lookup:--compiler-version | lookup:--compiler_version) _nc_kind=text ;;
    lookup:--registry-version | lookup:--registry_version) _nc_kind=text ;;
    lookup:--optimum) _nc_kind=flag ;;
    lookup:--mode) _nc_kind=choice _nc_choices='training inference all' ;;
    lookup:--table) _nc_kind=flag ;;
    lookup:--blocks) _nc_kind=flag ;;
    lookup:--repo-id | lookup:--repo_id) _nc_kind=repo ;;
    lookup:--max-workers | lookup:--max_workers) _nc_kind=integer ;;
    lookup:--token) _nc_kind=text ;;
    lookup:--profile) _nc_kind=text ;;
    lookup:--region) _nc_kind=text ;;
    lookup:--endpoint-url | lookup:--endpoint_url) _nc_kind=text ;;
    lookup:--no-sign-request | lookup:--no_sign_request) _nc_kind=flag ;;
    list:-m | list:--model) _nc_kind=model ;;
    list:--graphs) _nc_kind=flag ;;
    list:-v | list:--version | list:--compiler-version | list:--compiler_version) _nc_kind=text ;;
    list:--repo-id | list:--repo_id) _nc_kind=repo ;;
    list:--max-workers | list:--max_workers) _nc_kind=integer ;;
    list:--token) _nc_kind=text ;;
    list:--profile) _nc_kind=text ;;
    list:--region) _nc_kind=text ;;
    list:--endpoint-url | list:--endpoint_url) _nc_kind=text ;;
    list:--no-sign-request | list:--no_sign_request) _nc_kind=flag ;;
    add:-m | add:--model) _nc_kind=model ;;
    add:--task) _nc_kind=text ;;
    add:--precision) _nc_kind=choice _nc_choices='fp bf16 fp16' ;;
    add:--auto-cast-type | add:--auto_cast_type) _nc_kind=choice _nc_choices='bf16 fp16 tf32 fp32' ;;
    add:--num-cores | add:--num_cores) _nc_kind=integer ;;
    add:--train-batch-size | add:--train_batch_size | add:--batch-size | add:--batch_size) _nc_kind=integer ;;
    add:--eval-batch-size | add:--eval_batch_size) _nc_kind=integer ;;
    add:--sequence-length | add:--sequence_length) _nc_kind=integer ;;
    add:--encoder-sequence-length | add:--encoder_sequence_length) _nc_kind=integer ;;
    add:--decoder-sequence-length | add:--decoder_sequence_length) _nc_kind=integer ;;
    add:--gradient-accumulation-steps | add:--gradient_accumulation_steps) _nc_kind=integer ;;
    add:--max-steps | add:--max_steps) _nc_kind=integer ;;
    add:--repo-id | add:--repo_id) _nc_kind=repo ;;
    add:--cache-dir | add:--cache_dir) _nc_kind=directory ;;
    add:--manifest) _nc_kind=file ;;
    add:-j | add:--jobs) _nc_kind=integer ;;
    add:--dry-run | add:--dry_run) _nc_kind=flag ;;
    add:--continue-on-error | add:--continue_on_error) _nc_kind=flag ;;
    add:--force) _nc_kind=flag ;;
    add:--timeout) _nc_kind=integer ;;
    add:--max-workers | add:--max_workers) _nc_kind=integer ;;
    add:--no-xet | add:--no_xet) _nc_kind=flag ;;
    add:--token) _nc_kind=text ;;
    add:--profile) _nc_kind=text ;;
    add:--region) _nc_kind=text ;;
    add:--endpoint-url | add:--endpoint_url) _nc_kind=text ;;
    add:--no-sign-request | add:--no_sign_request) _nc_kind=flag ;;
    add:-v) _nc_kind=flag ;;
    completion:-v) _nc_kind=flag ;;
    man:-v) _nc_kind=flag ;;
    env:--repo-id | env:--repo_id) _nc_kind=repo ;;
    env:--cache-dir | env:--cache_dir) _nc_kind=directory ;;
    env:--token) _nc_kind=text ;;
    env:--profile) _nc_kind=text ;;
    env:--region) _nc_kind=text ;;
    env:--endpoint-url | env:--endpoint_url) _nc_kind=text ;;
    env:--no-sign-request | env:--no_sign_request) _nc_kind=flag ;;
    env:-v) _nc_kind=flag ;;
    sync:--repo-id | sync:--repo_id) _nc_kind=repo ;;
    sync:--cache-dir | sync:--cache_dir) _nc_kind=directory ;;
    sync:--pull) _nc_kind=flag ;;
    sync:--compiler-version | sync:--compiler_version) _nc_kind=text ;;
    sync:--replace-failed | sync:--replace_failed) _nc_kind=flag ;;
    sync:--model) _nc_kind=model ;;
    sync:--task) _nc_kind=text ;;
    sync:--batch-size | sync:--batch_size) _nc_kind=integer ;;
    sync:--sequence-length | sync:--sequence_length) _nc_kind=integer ;;
    sync:--num-cores | sync:--num_cores | sync:--tensor-parallel-size | sync:--tensor_parallel_size) _nc_kind=integer ;;
    sync:--max-size | sync:--max_size) _nc_kind=text ;;
    sync:-y | sync:--yes) _nc_kind=flag ;;
    sync:--dry-run | sync:--dry_run) _nc_kind=flag ;;
    sync:--clean-failed | sync:--clean_failed) _nc_kind=flag ;;
    sync:--clear-stale-locks | sync:--clear_stale_locks) _nc_kind=integer ;;
    sync:--max-workers | sync:--max_workers) _nc_kind=integer ;;
    sync:--no-xet | sync:--no_xet) _nc_kind=flag ;;
    sync:--token) _nc_kind=text ;;
    sync:--profile) _nc_kind=text ;;
    sync:--region) _nc_kind=text ;;
    sync:--endpoint-url | sync:--endpoint_url) _nc_kind=text ;;
    sync:--no-sign-request | sync:--no_sign_request) _nc_kind=flag ;;
    sync:-v) _nc_kind=flag ;;
    ls:-m | ls:--model) _nc_kind=model ;;
    ls:--graphs) _nc_kind=flag ;;
    ls:-v | ls:--version | ls:--compiler-version | ls:--compiler_version) _nc_kind=text ;;
    ls:--repo-id | ls:--repo_id) _nc_kind=repo ;;
    ls:--max-workers | ls:--max_workers) _nc_kind=integer ;;
    ls:--token) _nc_kind=text ;;
    ls:--profile) _nc_kind=text ;;
    ls:--region) _nc_kind=text ;;
    ls:--endpoint-url | ls:--endpoint_url) _nc_kind=text ;;
    ls:--no-sign-request | ls:--no_sign_request) _nc_kind=flag ;;
    :-V | :--version) _nc_kind=flag ;;
    *:--format) _nc_kind=choice _nc_choices='human json quiet' ;;
    *:--json) _nc_kind=flag ;;
    *:-q | *:--quiet) _nc_kind=flag ;;
    *:--verbose) _nc_kind=flag ;;
    *:-h | *:--help) _nc_kind=flag ;;
    *) return 1 ;;
  esac
}

# Sets _nc_words to the options of command $1 ("" before the command).
_neuron_cache_option_names() {
  case $1 in
    create) _nc_words='-n --name --public --exist-ok --exist_ok --no-set --no_set --token --profile --region --endpoint-url --endpoint_url --no-sign-request --no_sign_request --format --json -q --quiet -v --verbose -h --help' ;;
    set) _nc_words='-n --name --unset --token --format --json -q --quiet -v --verbose -h --help' ;;
    config) _nc_words='--repo-id --repo_id --cache-dir --cache_dir --token --profile --region --endpoint-url --endpoint_url --no-sign-request --no_sign_request --format --json -q --quiet -v --verbose -h --help' ;;
    synchronize) _nc_words='--repo-id --repo_id --cache-dir --cache_dir --pull --compiler-version --compiler_version --replace-failed --replace_failed --model --task --batch-size --batch_size --sequence-length --sequence_length --num-cores --num_cores --tensor-parallel-size --tensor_parallel_size --max-size --max_size -y --yes --dry-run --dry_run --clean-failed --clean_failed --clear-stale-locks --clear_stale_locks --max-workers --max_workers --no-xet --no_xet --token --profile --region --endpoint-url --endpoint_url --no-sign-request --no_sign_request --format --json -q --quiet -v --verbose -h --help' ;;
    push) _nc_words='--repo-id --repo_id --cache-dir --cache_dir --compiler-version --compiler_version --dry-run --dry_run --clean-failed --clean_failed --clear-stale-locks --clear_stale_locks --max-workers --max_workers --no-xet --no_xet --token --profile --region --endpoint-url --endpoint_url --no-sign-request --no_sign_request --format --json -q --quiet -v --verbose -h --help' ;;
    pull) _nc_words='--repo-id --repo_id --cache-dir --cache_dir --compiler-version --compiler_version --replace-failed --replace_failed --model --task --batch-size --batch_size --sequence-length --sequence_length --num-cores --num_cores --tensor-parallel-size --tensor_parallel_size --max-size --max_size -y --yes --dry-run --dry_run --max-workers --max_workers --no-xet --no_xet --token --profile --region --endpoint-url --endpoint_url --no-sign-request --no_sign_request --format --json -q --quiet -v --verbose -h --help' ;;
    status) _nc_words='--cache-dir --cache_dir --repo --repo-id --repo_id --token --format --json -q --quiet -v --verbose -h --help' ;;
    cleanup) _nc_words='--cache-dir --cache_dir --all --old-versions --old_versions --keep-version --keep_version --older-than --older_than --max-size --max_size --ttl --evict --stale-lock-age --stale_lock_age --wipe --repo --unregistered --repo-id --repo_id --token --max-workers --max_workers -y --yes --dry-run --dry_run --format --json -q --quiet -v --verbose -h --help' ;;
    lookup) _nc_words='--task --batch-size --batch_size --sequence-length --sequence_length --num-cores --num_cores --tensor-parallel-size --tensor_parallel_size --dtype --auto-cast-type --auto_cast_type --instance-type --instance_type -v --compiler-version --compiler_version --registry-version --registry_version --optimum --mode --table --blocks --repo-id --repo_id --max-workers --max_workers --token --profile --region --endpoint-url --endpoint_url --no-sign-request --no_sign_request --format --json -q --quiet --verbose -h --help' ;;
    list) _nc_words='-m --model --graphs -v --version --compiler-version --compiler_version --repo-id --repo_id --max-workers --max_workers --token --profile --region --endpoint-url --endpoint_url --no-sign-request --no_sign_request --format --json -q --quiet --verbose -h --help' ;;
    add) _nc_words='-m --model --task --precision --auto-cast-type --auto_cast_type --num-cores --num_cores --train-batch-size --train_batch_size --batch-size --batch_size --eval-batch-size --eval_batch_size --sequence-length --sequence_length --encoder-sequence-length --encoder_sequence_length --decoder-sequence-length --decoder_sequence_length --gradient-accumulation-steps --gradient_accumulation_steps --max-steps --max_steps --repo-id --repo_id --cache-dir --cache_dir --manifest -j --jobs --dry-run --dry_run --continue-on-error --continue_on_error --force --timeout --max-workers --max_workers --no-xet --no_xet --token --profile --region --endpoint-url --endpoint_url --no-sign-request --no_sign_request --format --json -q --quiet -v --verbose -h --help' ;;
    completion) _nc_words='--format --json -q --quiet -v --verbose -h --help' ;;
    man) _nc_words='--format --json -q --quiet -v --verbose -h --help' ;;
    env) _nc_words='--repo-id --repo_id --cache-dir --cache_dir --token --profile --region --endpoint-url --endpoint_url --no-sign-request --no_sign_request --format --json -q --quiet -v --verbose -h --help' ;;
    sync) _nc_words='--repo-id --repo_id --cache-dir --cache_dir --pull --compiler-version --compiler_version --replace-failed --replace_failed --model --task --batch-size --batch_size --sequence-length --sequence_length --num-cores --num_cores --tensor-parallel-size --tensor_parallel_size --max-size --max_size -y --yes --dry-run --dry_run --clean-failed --clean_failed --clear-stale-locks --clear_stale_locks --max-workers --max_workers --no-xet --no_xet --token --profile --region --endpoint-url --endpoint_url --no-sign-request --no_sign_request --format --json -q --quiet -v --verbose -h --help' ;;
    ls) _nc_words='-m --model --graphs -v --version --compiler-version --compiler_version --repo-id --repo_id --max-workers --max_workers --token --profile --region --endpoint-url --endpoint_url --no-sign-request --no_sign_request --format --json -q --quiet --verbose -h --help' ;;
    '') _nc_words='-V --version -h --help --format --json -q --quiet --verbose' ;;
    *) _nc_words= ;;
  esac
}

# Sets _nc_kind (and _nc_choices) for positional argument $2 (from 0) of command $1.
_neuron_cache_positional() {
  _nc_kind= _nc_choices=
  case "$1:$2" in
    ':0' | help:0) _nc_kind=subcommand ;;
    create:0) _nc_kind=repo ;;
    set:0) _nc_kind=repo ;;
    lookup:0) _nc_kind=model ;;
    list:0) _nc_kind=repo ;;
    completion:0) _nc_kind=choice _nc_choices='bash zsh fish' ;;
    ls:0) _nc_kind=repo ;;
    *) return 1 ;;
  esac
}

# Commands that run another command given after a bare `--`.
_neuron_cache_runs_command() {
  case $1 in
    add) return 0 ;;
  esac
  return 1
}

# Completes a value of kind $1 for the word $2 into COMPREPLY (choices in _nc_choices).
_neuron_cache_values() {
  local kind=$1 cur=$2 word
  case $kind in
    subcommand | choice)
      [[ $kind == subcommand ]] && _nc_choices=$_neuron_cache_commands
      for word in $_nc_choices; do
        [[ $word == "$cur"* ]] && COMPREPLY+=("$word")
      done
      ;;
    file)
      compopt -o filenames 2>/dev/null
      mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -f -- "$cur")
      ;;
    directory) _neuron_cache_directories "$cur" ;;
    repo)
      case $cur in
        /* | '~'*) _neuron_cache_directories "$cur" ;;
        file://*) _neuron_cache_directories "${cur#file://}" file:// ;;
        *) _neuron_cache_repos "$cur" ;;
      esac
      ;;
    model)
      # A Hub model id from the cached listing, else a local model directory or config.json.
      case $cur in
        /* | ./* | ../* | '~'*) ;;
        *) _neuron_cache_models "$cur" ;;
      esac
      ((${#COMPREPLY[@]})) || _neuron_cache_values file "$cur"
      ;;
    shell_command) mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -c -- "$cur") ;;
  esac
}

# Directories starting with $1, each put back behind $2 (file://).
_neuron_cache_directories() {
  local dir
  compopt -o filenames 2>/dev/null
  while IFS= read -r dir; do
    COMPREPLY+=("${2-}$dir")
  done < <(compgen -d -- "$1")
}

# Cache repos the user already named: the one `set` saved, and $CUSTOM_CACHE_REPO.
_neuron_cache_repos() {
  local file=${HF_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/huggingface}/optimum_neuron_custom_cache own="${XDG_CONFIG_HOME:-$HOME/.config}/neuron-cache/repo"
  local name= own_name= seen=' '
  [[ $file == '~/'* ]] && file=$HOME/${file#'~/'}
  [[ -r $file ]] && read -r name <"$file"
  [[ -r $own ]] && read -r own_name <"$own"
  for name in "$own_name" "$name" "${CUSTOM_CACHE_REPO-}"; do
    [[ -n $name && $name == "$1"* && $seen != *" $name "* ]] || continue
    COMPREPLY+=("$name")
    seen+="$name "
  done
}

# Model ids from the listing `neuron-cache list` keeps of the current repo.
_neuron_cache_models() {
  local file=${XDG_CACHE_HOME:-$HOME/.cache}/neuron-cache/completion/models.txt
  local model
  [[ -r $file ]] || return 0
  while IFS= read -r model || [[ -n $model ]]; do
    [[ -n $model && $model == "$1"* ]] && COMPREPLY+=("$model")
  done <"$file"
}

_neuron_cache() {
  local IFS=$' \t\n'
  local line=${COMP_LINE:0:COMP_POINT} cur command= pending= dash= positional=0 word prefix= i
  local -a words
  # Our own split of the line before the cursor, on blanks only (backslash-escaped blanks
  # kept), so --opt=value and file:///path stay one word whatever COMP_WORDBREAKS holds.
  read -a words <<<"$line"
  [[ -z $line || $line == *[[:blank:]] ]] && words+=("")
  local cword=$((${#words[@]} - 1))
  cur=${words[cword]}
  COMPREPLY=()

  for ((i = 1; i < cword; i++)); do
    word=${words[i]}
    if [[ -n $pending ]]; then
      pending=
      continue
    fi
    if [[ -n $command && $word == -- ]] && _neuron_cache_runs_command "$command"; then
      dash=$i
      break
    fi
    [[ $word == --*=* ]] && continue
    if [[ $word == -?* ]]; then
      _neuron_cache_option "$command" "$word" && [[ $_nc_kind != flag ]] && pending=$word
      continue
    fi
    if [[ -z $command ]]; then
      command=$word
    else
      positional=$((positional + 1))
    fi
  done

  if [[ -n $dash ]]; then
    if ((cword == dash + 1)); then
      _neuron_cache_values shell_command "$cur"
    elif declare -F _command_offset >/dev/null; then
      # bash-completion completes the rest as the arguments of that command.
      for ((i = 1; i < COMP_CWORD; i++)); do
        [[ ${COMP_WORDS[i]} == -- ]] && break
      done
      _command_offset $((i + 1))
      return
    else
      _neuron_cache_values file "$cur"
    fi
  elif [[ -n $pending ]]; then
    _neuron_cache_option "$command" "$pending"
    _neuron_cache_values "$_nc_kind" "$cur"
  elif [[ $cur == --*=* ]]; then
    if _neuron_cache_option "$command" "${cur%%=*}" && [[ $_nc_kind != flag ]]; then
      _neuron_cache_values "$_nc_kind" "${cur#*=}"
      COMPREPLY=("${COMPREPLY[@]/#/${cur%%=*}=}")
    fi
  elif [[ $cur != -* ]] && _neuron_cache_positional "$command" "$positional"; then
    _neuron_cache_values "$_nc_kind" "$cur"
  elif [[ -z $cur || $cur == -* ]]; then
    _neuron_cache_option_names "$command"
    for word in $_nc_words; do
      [[ $word == "$cur"* ]] && COMPREPLY+=("$word")
    done
  fi

  # Readline replaces only the text after the word's last break character (= or :).
  for ((i = ${#cur} - 1; i >= 0; i--)); do
    if [[ ${cur:i:1} == [=:] && ${COMP_WORDBREAKS-} == *"${cur:i:1}"* ]]; then
      prefix=${cur:0:i+1}
      break
    fi
  done
  [[ -n $prefix ]] && COMPREPLY=("${COMPREPLY[@]#"$prefix"}")
  return 0
}

complete -F _neuron_cache neuron-cache
