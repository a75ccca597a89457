#!/usr/bin/env bash
# npm run openstack:status — each daemon up.sh started, alive or not, and its memory (RSS and PSS summed over
# the process and its descendants), then the QEMU guests and the total.
. "$(dirname "$0")/lib.sh"
kib() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/$3" 2> /dev/null || echo 0; }
tree() { local c; echo "$1"; for c in $(ps -o pid= --ppid "$1" 2> /dev/null); do tree "$c"; done; }
rss=0 pss=0
row() { printf '%-24s %8s %6s %8s %8s\n' "$@"; }
row daemon pid procs rss_MiB pss_MiB
for name in $(cat "$RUN/started" 2> /dev/null); do
  pid_alive "$name" || { row "$name" - DEAD - -; continue; }
  r=0 p=0 n=0
  for q in $(tree "$(cat "$RUN/$name.pid")"); do r=$((r + $(kib "$q" VmRSS status))) p=$((p + $(kib "$q" Pss smaps_rollup))) n=$((n + 1)); done
  rss=$((rss + r)) pss=$((pss + p))
  row "$name" "$(cat "$RUN/$name.pid")" $n $((r / 1024)) $((p / 1024))
done
for q in $(pgrep -x qemu-system-x86); do
  grep -qa "$DATA/instances" "/proc/$q/cmdline" 2> /dev/null || continue # only this stack's guests
  r=$(kib "$q" VmRSS status) p=$(kib "$q" Pss smaps_rollup)
  rss=$((rss + r)) pss=$((pss + p))
  row "qemu $(grep -ao 'guest=[^,]*' "/proc/$q/cmdline" | head -1)" "$q" 1 $((r / 1024)) $((p / 1024))
done
row TOTAL "" "" $((rss / 1024)) $((pss / 1024))
