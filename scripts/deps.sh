#!/bin/sh
# make deps: install the Debian packages the build and the tests need, only
# those that are missing.  Each line: package, then a file that proves it is
# installed (checked first, so an installed machine never calls apt-get).
set -eu

NEEDED="
binutils-dev        /usr/include/bfd.h
zlib1g-dev          /usr/include/zlib.h
libiberty-dev       /usr/include/libiberty/demangle.h
python3             /usr/bin/python3
gcc                 /usr/bin/gcc
clang               /usr/bin/clang
clang-format        /usr/bin/clang-format-diff
clang-tidy          /usr/bin/clang-tidy
cppcheck            /usr/bin/cppcheck
valgrind            /usr/bin/callgrind_annotate
pkg-config          /usr/bin/pkg-config
libzstd-dev         /usr/include/zstd.h
chromium            /usr/bin/chromium
libjemalloc2        /usr/lib/x86_64-linux-gnu/libjemalloc.so.2
libtcmalloc-minimal4 /usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4
default-jdk-headless /usr/bin/javac
openmpi-bin         /usr/bin/mpirun
libopenmpi-dev      /usr/bin/mpicc
mpich               /usr/bin/mpiexec.mpich
libmpich-dev        /usr/bin/mpicc.mpich
gfortran            /usr/bin/gfortran
uftrace             /usr/bin/uftrace
libfmt-dev          /usr/include/fmt/format.h
npm                 /usr/bin/npm
jq                  /usr/bin/jq
golang-go           /usr/bin/go
gcc-aarch64-linux-gnu /usr/bin/aarch64-linux-gnu-gcc
g++-aarch64-linux-gnu /usr/bin/aarch64-linux-gnu-g++
qemu-user           /usr/bin/qemu-aarch64
libc6-dev:arm64     /usr/lib/aarch64-linux-gnu/libc.so
libstdc++6:arm64    /usr/lib/aarch64-linux-gnu/libstdc++.so.6
zlib1g-dev:arm64    /usr/lib/aarch64-linux-gnu/libz.so
libzstd-dev:arm64   /usr/lib/aarch64-linux-gnu/libzstd.so
libiberty-dev:arm64 /usr/lib/aarch64-linux-gnu/libiberty.a
libbinutils:arm64   /usr/lib/aarch64-linux-gnu/libsframe.so.0
"
# make check-arm64 (docs/testing.md): the arm64 packages above come through
# Debian multiarch.  binutils-dev:arm64 is not among them: it depends on
# binutils:arm64, which would replace the host's binutils and compiler; the
# Makefile links libbinutils:arm64's libbfd instead.
# Extra packages asked for by later parts of the test suite are appended
# here, one "package file" pair per line.
NEEDED="$NEEDED${HOOKIT_EXTRA_DEPS:-}"

missing=$(printf '%s\n' "$NEEDED" | while read -r pkg file; do
    [ -n "$pkg" ] || continue
    [ -e "$file" ] || printf '%s ' "$pkg"
done)

[ -n "$missing" ] || exit 0

if ! command -v apt-get >/dev/null 2>&1; then
    echo "make deps: not a Debian system; please install: $missing" >&2
    exit 1
fi
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
echo "make deps: installing $missing"
case "$missing" in
*:arm64*)
    dpkg --print-foreign-architectures | grep -qx arm64 || $SUDO dpkg --add-architecture arm64 ;;
esac
$SUDO apt-get update -qq
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
