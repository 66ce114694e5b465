# Sourced by scripts/setup.sh and scripts/install_test.sh: uv reads no pip configuration, so
# `uv_options` prints (one per line) the options that hand it the wheel folders, extra indexes and
# constraints pip is configured with (on these machines /opt/wheels holds torch's CPU build and a local
# mirror holds part of PyPI), and picks the best version across all indexes as pip does.
# Needs .venv/bin/python (pip) to read the configuration.

pip_config() {  # $1: a pip option; prints the values pip is configured with (PIP_* variables first)
  local listing value section
  listing=$(.venv/bin/python -m pip config list 2>/dev/null) || listing=""
  for section in ":env:" "install" "global"; do
    value=$(grep -F "$section.$1=" <<<"$listing" | sed "s/^[^=]*='\(.*\)'$/\1/" || true)
    if [ -n "$value" ]; then printf '%s\n' "$value"; return; fi
  done
}

uv_options() {
  local options=() value
  for value in $(pip_config find-links); do
    if [ -d "$value" ] || [[ "$value" == *://* ]]; then options+=(--find-links "$value"); fi
  done
  if [ ${#options[@]} -eq 0 ] && [ -d /opt/wheels ]; then options+=(--find-links /opt/wheels); fi
  for value in $(pip_config extra-index-url); do
    options+=(--extra-index-url "$value")
  done
  if [[ " ${options[*]} " == *" --extra-index-url "* ]]; then options+=(--index-strategy unsafe-best-match); fi
  for value in $(pip_config constraint); do
    if [ -f "$value" ]; then options+=(--constraint "$value"); fi
  done
  if [ ${#options[@]} -gt 0 ]; then printf '%s\n' "${options[@]}"; fi
}
