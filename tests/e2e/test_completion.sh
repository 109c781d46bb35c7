#!/usr/bin/env bash
# End to end: the completion scripts `neuron-cache completion bash|zsh|fish` prints, run in
# the real shells. Each case types a partial command line and checks the candidates each
# shell offers: bash through its programmable-completion variables, zsh through compinit
# and its completion widgets in an interactive shell driven over a pty (zsh/zpty), fish
# through `complete -C`. Also: the committed completions/ files and man page match what
# the binary prints, and completing never runs a program nor touches the network.
source "$(dirname "$0")/lib.sh"

for shell in bash zsh fish; do
  command -v "$shell" >/dev/null || { echo "completion tests need $shell: run 'make deps'" >&2; exit 1; }
done

# --- drivers ------------------------------------------------------------------------

# bash: what readline would put in place of the last word, one candidate per line, into
# OUT_DIR/N for line N (errors into OUT_DIR/N.err). One bash runs every line, each in a
# subshell of its own that starts as a fresh `bash -c` would: sourcing the script under
# set -u, with nothing but the script and the line as its arguments.
BASH_DRIVER='
nc_script=$1 nc_out_dir=$2
shift 2
nc_index=0
for nc_line in "$@"; do
  nc_index=$((nc_index + 1))
  (
  set -- "$nc_script" "$nc_line"
  unset nc_script nc_out_dir nc_index nc_line
  set -u
  source "$1"
  line=$2
  COMP_LINE=$line
  COMP_POINT=${#line}
  read -ra COMP_WORDS <<<"$line"
  [[ -z $line || $line == *[[:blank:]] ]] && COMP_WORDS+=("")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  cur=${COMP_WORDS[COMP_CWORD]}
  [[ -n ${SPY_PATH-} ]] && PATH=$SPY_PATH
  _neuron_cache neuron-cache "$cur" "${COMP_WORDS[COMP_CWORD-1]-}"
  # Readline replaces the text after the word'"'"'s last break character (= or :).
  text=${cur##*[=:]}
  for candidate in "${COMPREPLY[@]}"; do
    printf "%s\n" "${cur%"$text"}$candidate"
  done
  ) >"$nc_out_dir/$nc_index" 2>"$nc_out_dir/$nc_index.err"
done
'

# zsh: an interactive zsh (compinit, fpath holding _neuron-cache) on a pty. For each line,
# types it and TAB; a compadd wrapper records every match the completion system adds
# (with its prefixes), into OUT_DIR/N for line N. compinit keeps its dump in DUMP_FILE, as
# it does in users' shells: the first session of the suite scans fpath (1-2 s) and writes
# it, later ones load it (the dump only names the functions; _neuron-cache itself is
# autoloaded from each test's COMPDIR when first called).
ZSH_DRIVER='
zmodload zsh/zpty || exit 2
local compdir=$1 out_dir=$2 dump_file=$3 index=0 typed waited output
shift 3
zpty nc_shell zsh -f -i
zpty -w nc_shell "PROMPT=\"\" RPROMPT=\"\"; fpath=(${(q)compdir} \$fpath); autoload -Uz compinit; compinit -u -d ${(q)dump_file}"
zpty -w nc_shell "zstyle \":completion:*\" insert-tab false; bindkey \"^I\" complete-word"
zpty -w nc_shell "[[ -n \$SPY_PATH ]] && PATH=\$SPY_PATH"
zpty -w nc_shell "compadd() {
  if [[ \${@[1,(i)(-|--)]} == *-(O|A|D)\\ * ]]; then builtin compadd \"\$@\"; return; fi
  local -a hits apre hpre hsuf
  builtin compadd -A hits \"\$@\"
  zparseopts -E P:=apre p:=hpre s:=hsuf
  local hit
  for hit in \$hits; do print -r -- \"\$IPREFIX\${apre[2]}\${hpre[2]}\$hit\${hsuf[2]}\" >>\$NC_CAPTURE; done
  (( \$#hits ))
}"
zpty -w nc_shell "_nc_done() { print -r -- \"<<done>>\" >>\$NC_CAPTURE }"
# Should a typed line ever run, it runs nothing.
zpty -w nc_shell "neuron-cache() { : }"
for typed in "$@"; do
  (( index++ ))
  : >$out_dir/$index
  # comppostfuncs empties itself after each completion.
  zpty -w nc_shell "NC_CAPTURE=${(q)out_dir}/$index; comppostfuncs=(_nc_done)"
  zpty -w -n nc_shell "$typed"$'"'"'\t'"'"'
  for (( waited = 0; waited < 500; waited++ )); do
    zpty -r -t nc_shell output 2>/dev/null
    grep -q "^<<done>>\$" $out_dir/$index && break
    sleep 0.01
  done
  grep -q "^<<done>>\$" $out_dir/$index || print -r -- "<<timeout>>" >>$out_dir/$index
  zpty -w -n nc_shell $'"'"'\C-u'"'"'
done
zpty -d nc_shell
'

# fish: `complete -C` on each line, into OUT_DIR/N for line N (errors into OUT_DIR/N.err),
# candidates with their descriptions (run_cases keeps the first field). One fish for all
# lines; what sourcing the script prints to stderr goes to the driver's own stderr.
FISH_DRIVER='
source $argv[1]; test -n "$SPY_PATH"; and set PATH $SPY_PATH
set -l out_dir $argv[2]
set -l index 0
for line in $argv[3..-1]
  set index (math $index + 1)
  complete -C $line >$out_dir/$index 2>$out_dir/$index.err
end
'

generate_scripts() {
  mkdir -p "$SCRATCH/zsh"
  "$NC" completion bash >"$SCRATCH/neuron-cache.bash" || fail "completion bash failed"
  "$NC" completion zsh >"$SCRATCH/zsh/_neuron-cache" || fail "completion zsh failed"
  "$NC" completion fish >"$SCRATCH/neuron-cache.fish" || fail "completion fish failed"
}

# --- cases: collect, then run every shell on all of them ----------------------------

CASE_LINES=()
CASE_CHECKS=()
# expect_exact LINE WORDS...: the candidates are exactly WORDS.
expect_exact() { CASE_LINES+=("$1"); shift; CASE_CHECKS+=("exact $*"); }
# expect_has LINE WORDS...: WORDS are among the candidates.
expect_has() { CASE_LINES+=("$1"); shift; CASE_CHECKS+=("has $*"); }
# expect_lacks LINE WORDS...: none of WORDS is offered.
expect_lacks() { CASE_LINES+=("$1"); shift; CASE_CHECKS+=("lacks $*"); }

check_one() { # SHELL LINE CHECK CANDIDATE...
  local shell=$1 line=$2 mode=${3%% *} words=${3#* } got="" word
  shift 3
  # Candidates as sorted unique lines, directories without their trailing slash.
  (($#)) && got=$(printf '%s\n' "${@%/}" | LC_ALL=C sort -u)
  got=${got//$'\n'/ }
  case $mode in
    exact)
      local expected
      expected=$(printf '%s\n' $words | LC_ALL=C sort -u)
      expected=${expected//$'\n'/ }
      [[ "$got" == "$expected" ]] || fail "$shell: '$line' offers [$got], expected exactly [$expected]"
      ;;
    has)
      for word in $words; do
        [[ " $got " == *" $word "* ]] || fail "$shell: '$line' offers [$got], lacking $word"
      done
      ;;
    lacks)
      for word in $words; do
        [[ " $got " != *" $word "* ]] || fail "$shell: '$line' offers [$got], including $word"
      done
      ;;
  esac
}

run_cases() {
  local results="$SCRATCH/candidates" index shell
  mkdir -p "$results/bash" "$results/fish" "$results/zsh"
  bash --norc --noprofile -c "$BASH_DRIVER" _ "$SCRATCH/neuron-cache.bash" "$results/bash" "${CASE_LINES[@]}" \
    2>"$results/bash/driver.err"
  fish --no-config -c "$FISH_DRIVER" "$SCRATCH/neuron-cache.fish" "$results/fish" "${CASE_LINES[@]}" \
    2>"$results/fish/driver.err"
  zsh -f -c "$ZSH_DRIVER" _ "$SCRATCH/zsh" "$results/zsh" "$SUITE_ROOT/zcompdump" "${CASE_LINES[@]}" >/dev/null 2>&1
  for shell in bash fish; do
    [[ ! -s "$results/$shell/driver.err" ]] || fail "$shell: loading the script wrote errors: $(head -c 500 "$results/$shell/driver.err")"
  done
  local lines candidates entry timed_out
  for index in "${!CASE_LINES[@]}"; do
    for shell in bash zsh fish; do
      local file="$results/$shell/$((index + 1))"
      [[ -f $file ]] || { fail "$shell: no result for '${CASE_LINES[index]}'"; continue; }
      mapfile -t lines <"$file"
      candidates=()
      timed_out=0
      for entry in "${lines[@]}"; do
        [[ $entry == '<<done>>' ]] && continue
        [[ $entry == *'<<timeout>>'* ]] && timed_out=1
        # fish: the candidate without its description (the first tab-separated field).
        [[ $shell == fish ]] && entry=${entry%%$'\t'*}
        candidates+=("$entry")
      done
      if ((timed_out)); then
        fail "$shell: completing '${CASE_LINES[index]}' did not finish"
      else
        check_one "$shell" "${CASE_LINES[index]}" "${CASE_CHECKS[index]}" "${candidates[@]}"
      fi
      if [[ -s "$file.err" ]]; then
        fail "$shell: '${CASE_LINES[index]}' wrote errors: $(head -c 500 "$file.err")"
      fi
    done
  done
  CASE_LINES=()
  CASE_CHECKS=()
}

# Subcommands as `neuron-cache --help` lists them with their "(alias: NAME)"s, plus `help`.
# A command's line starts at column 3; its wrapped description continues on lines indented
# further, which are joined to it before its alias is read.
help_commands() {
  "$NC" --help | sed -n '/^Commands:/,/^$/p' | awk '
    function emit(line, fields) {
      split(line, fields, " ")
      print fields[1]
      if (match(line, /\(alias: [a-z-]+\)/)) print substr(line, RSTART + 8, RLENGTH - 9)
    }
    /^Commands:/ { next }
    /^  [a-z]/ { if (current != "") emit(current); current = $0; next }
    NF { current = current " " $0 }
    END { if (current != "") emit(current) }'
  echo help
}

# Long options as `neuron-cache COMMAND --help` documents them (with their underscore
# twins and aliases), the oracle the completion must match.
help_long_options() {
  "$NC" "$1" --help | sed -n '/^Options:/,/^Examples:/p;/^Common options:/,/^Examples:/p' \
    | grep -oE -- '--[a-z][a-z0-9_-]*' | while read -r name; do
      echo "$name"
      twin=${name#--}
      [[ $twin == *-* ]] && echo "--${twin//-/_}"
    done | LC_ALL=C sort -u
}

# --- tests ----------------------------------------------------------------------------

test_scripts_are_valid_in_each_shell() {
  generate_scripts
  run 0 bash -n "$SCRATCH/neuron-cache.bash" || return
  run 0 zsh -n "$SCRATCH/zsh/_neuron-cache" || return
  run 0 fish --no-config -n "$SCRATCH/neuron-cache.fish"
  head -1 "$SCRATCH/zsh/_neuron-cache" | grep -qx '#compdef neuron-cache' || fail "zsh script lacks #compdef"
}

test_subcommand_names() {
  generate_scripts
  expect_exact "neuron-cache " $(help_commands)
  expect_exact "neuron-cache cre" create
  expect_has "neuron-cache --json " $(help_commands)
  expect_has "neuron-cache --format json " $(help_commands)
  expect_exact "neuron-cache help s" $(help_commands | grep '^s')
  expect_exact "neuron-cache completion " bash fish zsh
  expect_exact "neuron-cache no-such-command --" ""
  # Aliases complete like the command they name.
  expect_exact "neuron-cache sy" sync synchronize
  expect_exact "neuron-cache sync --pu" --pull
  expect_exact "neuron-cache env --repo" --repo-id --repo_id
  expect_exact "neuron-cache help sy" sync synchronize
  run_cases
}

test_every_option_of_every_command_with_underscore_twins() {
  generate_scripts
  local command
  while read -r command; do
    [[ $command == help ]] && continue
    expect_exact "neuron-cache $command --" $(help_long_options "$command")
  done < <(help_commands)
  expect_exact "neuron-cache create --ex" --exist-ok --exist_ok
  expect_exact "neuron-cache config --repo" --repo-id --repo_id
  expect_has "neuron-cache create -" -n --name --public -q -h
  # -v: --verbose after a command without a -v of its own; list's and lookup's take a version.
  expect_has "neuron-cache synchronize -" -v --verbose
  expect_has "neuron-cache list -" -v --version --verbose
  expect_has "neuron-cache lookup -" -v --compiler-version --verbose
  expect_has "neuron-cache -" --version -V --help -h --format --json --quiet -q
  run_cases
}

test_choices() {
  generate_scripts
  expect_exact "neuron-cache config --format " human json quiet
  expect_exact "neuron-cache config --format j" json
  expect_exact "neuron-cache --format " human json quiet
  if "$NC" lookup --help >/dev/null 2>&1; then
    expect_has "neuron-cache lookup ./m --instance_type " trn1 inf2
    expect_has "neuron-cache lookup ./m --instance-type t" trn1
    expect_lacks "neuron-cache lookup ./m --instance-type t" inf2
  fi
  if "$NC" add --help >/dev/null 2>&1; then
    expect_has "neuron-cache add --precision " bf16
    touch "$SCRATCH/manifest.yaml"
    mkdir -p "$SCRATCH/manifests"
    expect_has "neuron-cache add --manifest $SCRATCH/manif" "$SCRATCH/manifest.yaml" "$SCRATCH/manifests"
  fi
  run_cases
  # --format=VALUE in one word: each shell completes the value, keeping --format=.
  expect_exact "neuron-cache config --format=" --format=human --format=json --format=quiet
  expect_exact "neuron-cache config --format=q" --format=quiet
  run_cases
}

test_directories_for_directory_repos() {
  generate_scripts
  mkdir -p "$SCRATCH/repo-a" "$SCRATCH/repo-b" "$SCRATCH/other"
  touch "$SCRATCH/repo-file"
  expect_exact "neuron-cache create $SCRATCH/repo" "$SCRATCH/repo-a" "$SCRATCH/repo-b"
  expect_exact "neuron-cache create file://$SCRATCH/repo" "file://$SCRATCH/repo-a" "file://$SCRATCH/repo-b"
  expect_exact "neuron-cache set --name $SCRATCH/repo-" "$SCRATCH/repo-a" "$SCRATCH/repo-b"
  expect_exact "neuron-cache config --repo_id $SCRATCH/oth" "$SCRATCH/other"
  if "$NC" synchronize --help >/dev/null 2>&1; then
    expect_exact "neuron-cache synchronize --cache-dir $SCRATCH/repo" "$SCRATCH/repo-a" "$SCRATCH/repo-b"
  fi
  run_cases
}

test_repo_ids_from_the_config_file_and_environment() {
  generate_scripts
  run 0 "$NC" create "$SCRATCH/repo" -q || return
  expect_exact "neuron-cache set " "file://$SCRATCH/repo"
  expect_exact "neuron-cache set fi" "file://$SCRATCH/repo"
  expect_exact "neuron-cache config --repo-id " "file://$SCRATCH/repo"
  run_cases
  # A Hub id in optimum's file beside the directory repo in neuron-cache's own file.
  mkdir -p "$HF_HOME"
  printf 'my-org/neuron-cache' >"$HF_HOME/optimum_neuron_custom_cache"
  export CUSTOM_CACHE_REPO=other-org/cache
  expect_exact "neuron-cache set " "file://$SCRATCH/repo" my-org/neuron-cache other-org/cache
  expect_exact "neuron-cache set my" my-org/neuron-cache
  expect_exact "neuron-cache config --repo_id=o" --repo_id=other-org/cache
  run_cases
  # HF_HOME unset: $XDG_CACHE_HOME/huggingface, as the binary resolves it.
  unset HF_HOME CUSTOM_CACHE_REPO
  export XDG_CACHE_HOME="$SCRATCH/xdg"
  run 0 "$NC" set "$SCRATCH/repo" -q || return
  expect_exact "neuron-cache set " "file://$SCRATCH/repo"
  run_cases
}

test_model_ids_from_the_list_cache() {
  generate_scripts
  export XDG_CACHE_HOME="$SCRATCH/xdg"
  mkdir -p "$XDG_CACHE_HOME/neuron-cache/completion" "$SCRATCH/local-model"
  printf 'meta-llama/Llama-3.1-8B\nmeta-llama/Llama-3.2-1B\nbert-base-uncased\n' \
    >"$XDG_CACHE_HOME/neuron-cache/completion/models.txt"
  if "$NC" lookup --help >/dev/null 2>&1; then
    expect_exact "neuron-cache lookup " bert-base-uncased meta-llama/Llama-3.1-8B meta-llama/Llama-3.2-1B
    expect_exact "neuron-cache lookup meta-llama/Llama-3.2" meta-llama/Llama-3.2-1B
    expect_exact "neuron-cache lookup $SCRATCH/local-m" "$SCRATCH/local-model"
  fi
  if "$NC" list --help >/dev/null 2>&1; then
    expect_exact "neuron-cache list -m b" bert-base-uncased
  fi
  if "$NC" add --help >/dev/null 2>&1; then
    expect_exact "neuron-cache add --model meta" meta-llama/Llama-3.1-8B meta-llama/Llama-3.2-1B
  fi
  run_cases
  # Without XDG_CACHE_HOME the list cache is under ~/.cache.
  unset XDG_CACHE_HOME
  mkdir -p "$HOME/.cache/neuron-cache/completion"
  echo "gpt2" >"$HOME/.cache/neuron-cache/completion/models.txt"
  if "$NC" lookup --help >/dev/null 2>&1; then
    expect_exact "neuron-cache lookup g" gpt2
  fi
  expect_exact "neuron-cache cre" create
  run_cases
}

test_command_after_double_dash_in_add() {
  if ! "$NC" add --help >/dev/null 2>&1; then
    echo "    (no add command in this build)"
    return
  fi
  generate_scripts
  grep -A4 '^_neuron_cache_runs_command()' "$SCRATCH/neuron-cache.bash" | grep -q '^ *add)' \
    || { fail "add does not declare the command it runs after -- in its option table (a PositionalSpec of kind ValueKind::shell_command), so no shell can complete it"; return; }
  mkdir -p "$SCRATCH/tools"
  printf '#!/bin/sh\n' >"$SCRATCH/tools/nc-stand-in-compiler"
  chmod +x "$SCRATCH/tools/nc-stand-in-compiler"
  touch "$SCRATCH/train-script.py"
  export PATH="$SCRATCH/tools:$PATH"
  expect_exact "neuron-cache add -m gpt2 -- nc-stand-in-comp" nc-stand-in-compiler
  expect_has "neuron-cache add -m gpt2 -- nc-stand-in-compiler $SCRATCH/train-" "$SCRATCH/train-script.py"
  run_cases
}

# Completion reads two small files itself: with PATH holding only spies (any program it
# ran would leave a trace) and HF_ENDPOINT unroutable, every dynamic case still answers.
test_no_program_and_no_network() {
  generate_scripts
  local spy_dir="$SCRATCH/spies" tool
  mkdir -p "$spy_dir" "$SCRATCH/repo-dir"
  for tool in neuron-cache curl wget cat sed awk grep sort head tail cut tr python3 git ls find \
              uname readlink basename dirname env; do
    printf '#!/bin/sh\necho "%s $*" >>"%s/ran"\n' "$tool" "$SCRATCH" >"$spy_dir/$tool"
    chmod +x "$spy_dir/$tool"
  done
  mkdir -p "$HF_HOME"
  printf 'my-org/neuron-cache' >"$HF_HOME/optimum_neuron_custom_cache"
  export XDG_CACHE_HOME="$SCRATCH/xdg"
  mkdir -p "$XDG_CACHE_HOME/neuron-cache/completion"
  echo "bert-base-uncased" >"$XDG_CACHE_HOME/neuron-cache/completion/models.txt"
  export HF_ENDPOINT="http://10.255.255.1:9" SPY_PATH="$spy_dir"
  expect_exact "neuron-cache set " my-org/neuron-cache
  expect_exact "neuron-cache config --repo-id $SCRATCH/repo-d" "$SCRATCH/repo-dir"
  expect_exact "neuron-cache cre" create
  if "$NC" lookup --help >/dev/null 2>&1; then
    expect_exact "neuron-cache lookup b" bert-base-uncased
  fi
  run_cases
  [[ ! -e "$SCRATCH/ran" ]] || fail "completion ran programs: $(cat "$SCRATCH/ran")"
  lacks "$SCRATCH/neuron-cache.bash" "HF_ENDPOINT"
  lacks "$SCRATCH/zsh/_neuron-cache" "HF_ENDPOINT"
  lacks "$SCRATCH/neuron-cache.fish" "HF_ENDPOINT"
}

test_completion_command_bad_input() {
  run 2 "$NC" completion tcsh || return
  one_line "$ERR"
  contains "$ERR" "unknown shell 'tcsh'; choose one of bash, zsh, fish"
  [[ ! -s "$OUT" ]] || fail "stdout not empty on error"
  run 2 "$NC" completion || return
  contains "$ERR" "missing argument SHELL"
  run 2 "$NC" completion bash zsh
  contains "$ERR" "unexpected argument 'zsh'"
  run 0 "$NC" completion --help
  contains "$OUT" "Usage: neuron-cache completion [OPTIONS] SHELL"
}

# The committed scripts and man page are what the binary generates: a change to any
# command's options fails here until they are regenerated.
test_committed_files_are_up_to_date() {
  local regenerate="make completions   (or: cmake --build BUILD && BUILD/bin/neuron-cache completion bash > completions/neuron-cache.bash, ... zsh > completions/_neuron-cache, fish > completions/neuron-cache.fish, man > completions/neuron-cache.1)"
  local pair name stale=""
  for pair in "bash:neuron-cache.bash" "zsh:_neuron-cache" "fish:neuron-cache.fish" "man:neuron-cache.1"; do
    name=${pair#*:}
    if [[ ${pair%%:*} == man ]]; then
      "$NC" man >"$SCRATCH/$name"
    else
      "$NC" completion "${pair%%:*}" >"$SCRATCH/$name"
    fi
    if ! diff -u "$SOURCE_DIR/completions/$name" "$SCRATCH/$name" >"$SCRATCH/$name.diff" 2>&1; then
      stale+=" completions/$name"
      head -30 "$SCRATCH/$name.diff" >&2
    fi
  done
  [[ -z $stale ]] || fail "out of date with the CLI:$stale; regenerate with: $regenerate"
}

test_man_page_covers_every_command_and_option() {
  run 0 "$NC" man || return
  cp "$OUT" "$SCRATCH/neuron-cache.1"
  local page="$SCRATCH/neuron-cache.1" command name
  head -3 "$page" | grep -q '^\.TH NEURON\\-CACHE 1' || fail "no .TH header"
  for section in NAME SYNOPSIS DESCRIPTION COMMANDS OPTIONS ENVIRONMENT FILES "EXIT STATUS" EXAMPLES; do
    grep -qx "\.SH $section" "$page" || fail "man page lacks section $section"
  done
  for name in CUSTOM_CACHE_REPO HF_HOME HF_TOKEN HF_ENDPOINT HF_HUB_OFFLINE NEURON_CC_FLAGS \
              NEURON_COMPILE_CACHE_URL XDG_CACHE_HOME; do
    grep -qx "\\\\fB${name}\\\\fR" "$page" || fail "ENVIRONMENT lacks $name"
  done
  # Every variable the sources read is in the ENVIRONMENT table (environment_table.cpp),
  # and every exit code the program uses is in EXIT STATUS. Reads go through helpers
  # (size_setting("..."), lists of names), so any string literal that is a whole
  # NEURON_*/HF_*/AWS_*/... name counts, besides the generic readers' arguments.
  local variables sources=("$SOURCE_DIR"/libhubcache/src "$SOURCE_DIR"/libhubcache/include "$SOURCE_DIR"/registry
                           "$SOURCE_DIR"/addjobs "$SOURCE_DIR"/apps)
  variables=$( (grep -rhoE '(get_non_empty|get_flag|\.get|getenv|find|count)\("[A-Z][A-Z0-9_]+"\)' "${sources[@]}";
               grep -rhoE '"(NEURON|HF|HUGGINGFACE|HUGGING_FACE|AWS|XDG|TRANSFORMERS|CUSTOM_CACHE)_[A-Z0-9_]+"' \
                 --exclude=environment_table.cpp "${sources[@]}") |
             grep -oE '"[A-Z][A-Z0-9_]+"' | tr -d '"' | sort -u)
  [[ $(wc -w <<<"$variables") -ge 15 ]] || fail "found too few variables in the sources: $variables"
  for name in $variables; do
    grep -qx "\\\\fB${name}\\\\fR" "$page" || fail "ENVIRONMENT lacks $name, which the sources read"
  done
  local section
  section=$(sed -n '/^\.SH EXIT STATUS/,/^\.SH EXAMPLES/p' "$page")
  for code in 0 1 2 3 '128+N'; do
    grep -qxF "\\fB$code\\fR" <<<"$section" || fail "EXIT STATUS lacks $code"
  done
  # The page and the help as text: hundreds of fixed-string checks without a grep each.
  local page_text help_text
  page_text=$(<"$page")
  help_text=$("$NC" --help | tr -s ' \n' '  ') # wrapped lines joined
  while read -r command; do
    [[ $command == help ]] && continue
    if [[ $help_text == *"(alias: $command)"* ]]; then
      grep -qxF "Also available as $command." "$page" || fail "the man page does not name the alias $command"
      continue
    fi
    grep -qxF ".SS \\fB$command\\fR" "$page" || fail "no section for command $command"
    while read -r name; do
      [[ $page_text == *"\\fB${name//-/\\-}\\fR"* ]] || fail "man page lacks $name of $command"
    done < <(help_long_options "$command")
  done < <(help_commands)
  if command -v groff >/dev/null; then
    groff -man -Tutf8 -ww -z "$page" 2>"$SCRATCH/groff.err"
    [[ ! -s "$SCRATCH/groff.err" ]] || fail "groff warns: $(head -5 "$SCRATCH/groff.err")"
  fi
}

run_tests
