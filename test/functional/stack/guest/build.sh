#!/usr/bin/env bash
# guest/build.sh <dir> — the test guest, made from Debian packages: Debian's kernel (its vmlinuz unpacked to
# the plain ELF vmlinux, which QEMU boots directly), an initramfs of busybox-static plus our /init, and a
# tiny raw root disk (Nova needs an image to boot from; the guest never reads it). Skips what exists.
set -euo pipefail
out=$1
here=$(cd "$(dirname "$0")" && pwd)
cache=${DRAINER_STACK_CACHE:-/var/cache/drainer-openstack}
mkdir -p "$out" "$cache"
if [ ! -s "$out/vmlinux" ]; then
  pkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-/ { print $2; exit }')
  deb=$(ls "$cache/${pkg}"_*.deb 2> /dev/null | head -1 || true)
  if [ -z "$deb" ]; then
    (cd "$cache" && apt-get download -q "$pkg" 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
    deb=$(ls "$cache/${pkg}"_*.deb | head -1)
  fi
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  dpkg-deb -x "$deb" "$tmp"
  # bzImage = setup code + an xz stream of vmlinux: decompress from the stream's magic to its end
  python3 - "$tmp"/boot/vmlinuz-* "$out/vmlinux.part" << 'PY'
import lzma, sys
blob = open(sys.argv[1], "rb").read()
start = blob.find(b"\xfd7zXZ\x00")
vmlinux = lzma.LZMADecompressor().decompress(blob[start:])
assert vmlinux[:4] == b"\x7fELF", "not an ELF kernel"
open(sys.argv[2], "wb").write(vmlinux)
PY
  mkdir -p "$out/modules"
  for m in kernel/drivers/acpi/button.ko kernel/drivers/input/evdev.ko; do cp "$tmp"/lib/modules/*/"$m" "$out/modules/"; done
  mv "$out/vmlinux.part" "$out/vmlinux"
fi
if [ ! -s "$out/initrd.cpio.gz" ] || [ "$here/init" -nt "$out/initrd.cpio.gz" ]; then
  root=$(mktemp -d)
  mkdir -p "$root/bin" "$root/lib/modules"
  cp /bin/busybox "$root/bin/busybox"
  cp "$here/init" "$root/init" && chmod 755 "$root/init"
  cp "$out"/modules/*.ko "$root/lib/modules/"
  (cd "$root" && find . | cpio -o -H newc --quiet | gzip -9) > "$out/initrd.cpio.gz"
  rm -rf "$root"
fi
[ -s "$out/root.img" ] || truncate -s 1M "$out/root.img"
