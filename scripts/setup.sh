#!/usr/bin/env bash
# fabriclab setup: system packages, the project venv, the project itself.
# Idempotent; used by `make setup`, by CI (.ci/run via `make test`) and by the lab VM.
# Nothing is fetched at run time after this.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv="${FABRICLAB_VENV:-$here/.venv}"
stamp="$venv/.fabriclab-setup"

apt_packages=(
  mininet tcpdump iproute2 iputils-ping ethtool procps
  openssh-server sudo   # --servers: namespace "servers" run sshd; Mininet's cluster mode runs sudo
  python3 python3-venv python3-pip python3-dev
  shellcheck vagrant make
  opensm ibsim-utils   # make bench: OpenSM side by side with our routing engines
  chromium chromium-driver python3-selenium   # the live view's test in a real headless browser
)

log() { printf '[setup] %s\n' "$*"; }

if [ "$(id -u)" -ne 0 ]; then
  echo "fabriclab setup needs root (apt packages, network namespaces): run it as root or with sudo." >&2
  exit 1
fi

missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  log "installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  log "Debian packages present"
fi

# Mininet's Python module lives in Debian's site-packages, so the venv must be
# made from Debian's interpreter and see the system site.
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import mininet.net' 2>/dev/null; then
  log "creating venv $venv from /usr/bin/python3 (--system-site-packages)"
  rm -rf "$venv"
  /usr/bin/python3 -m venv --system-site-packages "$venv"
fi

if [ ! -f "$stamp" ] || [ "$here/pyproject.toml" -nt "$stamp" ]; then
  log "installing fabriclab and its Python dependencies into the venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -e "${here}[dev]"
  touch "$stamp"
else
  log "Python packages up to date"
fi

"$venv/bin/python" - <<'PY'
import importlib
for mod in ("mininet.net", "scapy.all", "grpc", "p4.v1.p4runtime_pb2", "p4runtime_sh.shell", "lark"):
    importlib.import_module(mod)
PY
# The embedded compiler's LALR tables are built once per user and cached (~0.5 s):
# build them now, so the first compile a user (or `make bench`) times is not that build.
"$venv/bin/python" -c 'from p4compiler import syntax; syntax._parser()'
log "ready: $venv"
