# Helpers for scripts that read Go modules (sourced; needs $cache). The module cache keeps each
# version after its first download.

module_dir() {  # module_dir MODULE VERSION: the unpacked directory of the module version
  (cd "$cache" && go mod download -json "$1@$2") | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("Dir") or sys.exit(d.get("Error", "no Dir")))'
}

module_gomod() {  # module_gomod MODULE VERSION: the module version's go.mod file
  (cd "$cache" && go mod download -json "$1@$2") | python3 -c 'import json,sys; print(json.load(sys.stdin)["GoMod"])'
}

wrapper_module() {  # wrapper_module DIR MODULE VERSION: a go.mod requiring MODULE@VERSION
  mkdir -p "$1"
  printf 'module verl-ppo.local/%s-build\n\ngo 1.26.0\n\nrequire %s %s\n' "$(basename "$1")" "$2" "$3" > "$1/go.mod"
}
