# Shared settings of the project's own OpenStack (sourced by up.sh, down.sh, status.sh).
# Everything binds to loopback; state lives in one directory so `down.sh --purge` can wipe it.
STACK_HOME=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
STATE=${DRAINER_STACK_DIR:-${TMPDIR:-/tmp}/drainer-openstack}
ETC=$STATE/etc DATA=$STATE/data LOG=$STATE/log RUN=$STATE/run
ADMIN_PASS=${DRAINER_STACK_PASSWORD:-secret}
DB_PASS=secret
KEYSTONE=http://127.0.0.1:5000/v3
COMPUTE_HOSTS="compute-a compute-b"
# Each compute host's libvirtd listens on its own loopback address (live_migration_inbound_addr).
host_addr() { case $1 in compute-a) echo 127.0.0.2 ;; compute-b) echo 127.0.0.3 ;; esac; }
# QEMU's incoming-migration ports per host: the two daemons must not hand out the same ones.
host_ports() { case $1 in compute-a) echo "49152 49183" ;; compute-b) echo "49184 49215" ;; esac; }
# Ports the control plane needs on 127.0.0.1 (rabbitmq, epmd, mariadb, keystone, glance, placement,
# nova-api, the Neutron stand-in) and libvirtd's TCP port on each host address.
CONTROL_PORTS="5672 4369 3306 5000 9292 8778 8774 9696"
LIBVIRT_PORT=16509

# The OpenStack code lives in Debian's python3; keep pyenv shims and the like out of its way.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
unset PYTHONPATH PYTHONHOME || true

pid_alive() { [ -f "$RUN/$1.pid" ] && kill -0 "$(cat "$RUN/$1.pid")" 2> /dev/null; }
