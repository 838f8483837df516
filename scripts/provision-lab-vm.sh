#!/usr/bin/env bash
# Provisions the fabriclab lab VM (Debian 12): the project's setup, then real
# p4c and bmv2 (simple_switch_grpc built with PI) so TARGET=bmv2 works.
#
# Default: p4lang's packages for Debian 12 from the openSUSE Build Service
# (project home:p4lang). Fallback (FABRICLAB_P4_FROM_SOURCE=1, or when the
# packages cannot be had): build PI, behavioral-model and p4c from source at
# the pinned tags below.
set -euo pipefail

project=/vagrant
obs_repo="https://download.opensuse.org/repositories/home:/p4lang/Debian_12"

# Pinned versions for the from-source path (tags of the p4lang repositories).
pi_tag="v0.1.0"
bmv2_tag="1.15.0"
p4c_tag="v1.2.4.2"

log() { printf '[provision] %s\n' "$*"; }

install_from_packages() {
  log "adding p4lang's Debian 12 repository"
  apt-get install -y -q curl gnupg ca-certificates
  curl -fsSL "$obs_repo/Release.key" | gpg --dearmor >/usr/share/keyrings/p4lang.gpg
  echo "deb [signed-by=/usr/share/keyrings/p4lang.gpg] $obs_repo/ /" \
    >/etc/apt/sources.list.d/p4lang.list
  apt-get update -q
  apt-get install -y -q p4lang-p4c p4lang-bmv2
}

build_from_source() {
  log "building PI $pi_tag, behavioral-model $bmv2_tag and p4c $p4c_tag from source"
  apt-get install -y -q git build-essential cmake autoconf automake libtool pkg-config \
    bison flex libboost-all-dev libgmp-dev libpcap-dev libssl-dev libthrift-dev \
    thrift-compiler libnanomsg-dev libjudy-dev libreadline-dev libgc-dev \
    libprotobuf-dev protobuf-compiler libgrpc++-dev protobuf-compiler-grpc \
    python3-dev llvm clang
  local src=/opt/p4src
  mkdir -p "$src"
  cd "$src"
  [ -d PI ] || git clone --depth 1 --branch "$pi_tag" --recurse-submodules \
    https://github.com/p4lang/PI.git
  (cd PI && ./autogen.sh && ./configure --with-proto --without-internal-rpc \
    --without-cli --without-bmv2 && make -j"$(nproc)" && make install && ldconfig)
  [ -d behavioral-model ] || git clone --depth 1 --branch "$bmv2_tag" \
    https://github.com/p4lang/behavioral-model.git
  (cd behavioral-model && ./autogen.sh && ./configure --with-pi --disable-elogger \
    --without-nanomsg && make -j"$(nproc)" && make install && ldconfig)
  (cd behavioral-model/targets/simple_switch_grpc && ./autogen.sh && ./configure \
    && make -j"$(nproc)" && make install && ldconfig)
  [ -d p4c ] || git clone --depth 1 --branch "$p4c_tag" --recurse-submodules \
    https://github.com/p4lang/p4c.git
  (cd p4c && mkdir -p build && cd build && cmake .. -DENABLE_EBPF=OFF -DENABLE_UBPF=OFF \
    -DENABLE_DPDK=OFF -DENABLE_P4TC=OFF -DENABLE_GTESTS=OFF && make -j"$(nproc)" && make install)
}

export DEBIAN_FRONTEND=noninteractive
apt-get update -q
bash "$project/scripts/setup.sh"

if command -v simple_switch_grpc >/dev/null && command -v p4c >/dev/null; then
  log "p4c and simple_switch_grpc already installed"
elif [ "${FABRICLAB_P4_FROM_SOURCE:-0}" = "1" ]; then
  build_from_source
else
  install_from_packages || { log "p4lang packages unavailable; building from source"; build_from_source; }
fi

log "p4c: $(p4c --version 2>&1 | head -n 1)"
log "simple_switch_grpc: $(simple_switch_grpc --version 2>&1 | head -n 1)"
log "done: cd /vagrant && sudo make test   (TARGET=bmv2 is auto-detected)"
