#!/usr/bin/env bash
# npm run openstack:down [-- --purge] — stops what up.sh started: the guests through their libvirtd, then
# each recorded PID and its descendants, newest first (never a process found by name). --purge (or
# PURGE=1) also deletes the state (databases, images, instances, logs) so the next up starts fresh.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
purge=${PURGE:-0}
[ "${1:-}" = --purge ] && purge=1

# guests first: QEMU processes are not the libvirtds' children
for h in $COMPUTE_HOSTS; do
  pid_alive "libvirtd-$h" || continue
  uri=qemu+tcp://$(host_addr "$h")/system
  for dom in $(virsh -c "$uri" list --name 2> /dev/null); do
    virsh -c "$uri" destroy "$dom" > /dev/null 2>&1 && echo "openstack:down: destroyed guest $dom on $h"
  done
done

snapshot=$(ps -eo pid=,ppid=)
descendants() { # every descendant of $1 in one ps snapshot, breadth first
  echo "$snapshot" | awk -v root="$1" '{ kids[$2] = kids[$2] " " $1 }
    END { n = split(kids[root], q, " "); for (i = 1; i <= n; i++) { print q[i]; m = split(kids[q[i]], c, " ");
          for (j = 1; j <= m; j++) q[++n] = c[j] } }'
}
stop() { # names... — TERM, up to 20 s, then KILL what is left (descendants included)
  local name pid pids="" kids=""
  for name in "$@"; do
    pid_alive "$name" || { rm -f "$RUN/$name.pid"; continue; }
    pid=$(cat "$RUN/$name.pid")
    kids="$kids $(descendants "$pid")"
    kill -TERM "$pid" 2> /dev/null && pids="$pids $pid"
    rm -f "$RUN/$name.pid"
  done
  for _ in $(seq 40); do
    local left=""
    for pid in $pids; do kill -0 "$pid" 2> /dev/null && left="$left $pid"; done
    [ -z "$left" ] && break
    sleep 0.5
  done
  for pid in $pids $kids; do kill -0 "$pid" 2> /dev/null && kill -KILL "$pid" 2> /dev/null; done
  return 0
}
if [ -f "$RUN/started" ]; then
  services=$(tac "$RUN/started")
  infra="mariadb rabbitmq epmd"
  stop $(for s in $services; do case " $infra " in *" $s "*) ;; *) echo "$s" ;; esac; done)
  stop mariadb rabbitmq
  stop epmd
  : > "$RUN/started"
  echo "openstack:down: stopped"
else
  echo "openstack:down: nothing running in $STATE"
fi
if [ "$purge" = 1 ]; then
  rm -rf "$STATE"
  echo "openstack:down: purged $STATE"
fi
