#!/bin/sh
# One "host" for the real-logind suite: systemd as PID 1 of new PID, mount, UTS and IPC namespaces (the
# caller runs this under `unshare --fork --pid --mount --uts --ipc`), in an overlay on the cached Debian tree
# so each boot starts clean and the cache is never written. Usage: boot-host.sh <rootfs> <workdir> <delay-sec>
set -eu
ROOTFS=$1 WORK=$2 DELAY=$3
mount --make-rprivate /
mkdir -p "$WORK/upper" "$WORK/work" "$WORK/merged"
mount -t overlay overlay -o "lowerdir=$ROOTFS,upperdir=$WORK/upper,workdir=$WORK/work" "$WORK/merged"
M=$WORK/merged
mount -t proc proc "$M/proc"
mount --rbind /sys "$M/sys"
mount --rbind /dev "$M/dev"
mount -t tmpfs tmpfs "$M/run"
mkdir -p "$M/etc/systemd/logind.conf.d"
printf '[Login]\nInhibitDelayMaxSec=%s\n' "$DELAY" > "$M/etc/systemd/logind.conf.d/99-drainer-test.conf"
hostname drainer-host
export container=drainer-test
exec chroot "$M" /lib/systemd/systemd --log-target=console --show-status=false
