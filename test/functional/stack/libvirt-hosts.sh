#!/usr/bin/env bash
# libvirt-hosts.sh start — one libvirtd per compute host, as if each were its own machine: its own mount
# namespace (private /etc/libvirt, /run/libvirt, /var/lib/libvirt, ...), its own hostname (Nova names the
# hypervisor and its Placement provider after it) and host_uuid (libvirt refuses to migrate to a host
# with its own UUID), listening on its own loopback address with its own migration port range.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
uuid_of() { case $1 in compute-a) echo 5f0c8a52-0000-4000-8000-00000000000a ;; *) echo 5f0c8a52-0000-4000-8000-00000000000b ;; esac; }

for h in $COMPUTE_HOSTS; do
  pid_alive "libvirtd-$h" && continue
  root=$STATE/hosts/$h addr=$(host_addr "$h")
  read -r pmin pmax <<< "$(host_ports "$h")"
  mkdir -p "$root"/{etc,run,lib,cache,log}
  cat > "$root/etc/libvirtd.conf" << CONF
listen_tls = 0
listen_tcp = 1
listen_addr = "$addr"
auth_tcp = "none"
auth_unix_rw = "none"
host_uuid = "$(uuid_of "$h")"
log_outputs = "3:file:$LOG/libvirtd-$h.log"
CONF
  # TCG guests run as root with no cgroups, namespaces or security labels: none of those exist here.
  cat > "$root/etc/qemu.conf" << CONF
user = "root"
group = "root"
dynamic_ownership = 0
remember_owner = 0
security_driver = "none"
cgroup_controllers = [ ]
namespaces = [ ]
stdio_handler = "file"
migration_address = "$addr"
migration_host = "$addr"
migration_port_min = $pmin
migration_port_max = $pmax
shared_filesystems = [ "$DATA/instances" ]
CONF
  # the mount points must exist in the parent namespace before they can be covered
  mkdir -p /run/libvirt /var/lib/libvirt /var/cache/libvirt /var/log/libvirt
  setsid unshare --mount --uts --propagation private sh -c "
    mount --bind '$root/etc' /etc/libvirt && mount --bind '$root/run' /run/libvirt &&
    mount --bind '$root/lib' /var/lib/libvirt && mount --bind '$root/cache' /var/cache/libvirt &&
    mount --bind '$root/log' /var/log/libvirt && hostname '$h' && exec libvirtd --listen --pid-file '$RUN/libvirtd-$h.pidfile'" \
    >> "$LOG/libvirtd-$h.out" 2>&1 < /dev/null &
  echo $! > "$RUN/libvirtd-$h.pid"
  grep -qx "libvirtd-$h" "$RUN/started" 2> /dev/null || echo "libvirtd-$h" >> "$RUN/started"
done
for h in $COMPUTE_HOSTS; do
  for _ in $(seq 30); do virsh -c "qemu+tcp://$(host_addr "$h")/system" hostname > /dev/null 2>&1 && break; sleep 1; done
  got=$(virsh -c "qemu+tcp://$(host_addr "$h")/system" hostname 2>&1) || {
    echo "libvirtd of $h did not answer: $got; see $LOG/libvirtd-$h.log" >&2
    exit 1
  }
  [ "$got" = "$h" ] || { echo "libvirtd of $h calls itself '$got'" >&2; exit 1; }
done
