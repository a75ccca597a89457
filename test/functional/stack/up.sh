#!/usr/bin/env bash
# npm run openstack:up — the project's own OpenStack on this machine, from Debian 12's packages, no systemd,
# everything on loopback: RabbitMQ, MariaDB, Keystone, Glance, Placement, a Neutron stand-in, nova-api,
# -conductor, -scheduler and two nova-compute hosts, compute-a and compute-b.
#   NOVA_DRIVER=libvirt (default): each host drives its own libvirtd (QEMU/TCG) in its own namespaces
#                                   (libvirt-hosts.sh); servers are real guests (guest/build.sh).
#   NOVA_DRIVER=fake:               Nova's fake.FakeLiveMigrateDriver (migrations take ~6 s, no guests).
# Idempotent: a re-run rewrites configs, skips what is done, leaves running daemons alone.
# The last line printed is the path of the openrc (admin credentials as OS_*).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
DRIVER=${NOVA_DRIVER:-libvirt}
case $DRIVER in fake | libvirt) ;; *) echo "openstack:up: NOVA_DRIVER must be fake or libvirt, not '$DRIVER'" >&2; exit 2 ;; esac
[ "$(id -u)" = 0 ] || { echo "openstack:up: run as root (it installs packages and starts daemons)" >&2; exit 2; }

T0=$(date +%s)
mkdir -p "$ETC" "$DATA" "$LOG" "$RUN"
if pid_alive nova-api && [ "$(cat "$STATE/driver" 2> /dev/null)" != "$DRIVER" ]; then
  echo "openstack:up: the stack in $STATE runs NOVA_DRIVER=$(cat "$STATE/driver"); run npm run openstack:down first" >&2
  exit 2
fi
# A port another process holds would make a daemon die later with a confusing log: refuse now.
port_busy() { (exec 3<> "/dev/tcp/$1/$2") 2> /dev/null; }
port_owner() { case $1 in 5672 | 4369) echo rabbitmq ;; 3306) echo mariadb ;; 5000) echo keystone ;;
  9292) echo glance-api ;; 8778) echo placement ;; 8774) echo nova-api ;; 9696) echo neutron-standin ;; esac; }
for p in $CONTROL_PORTS; do
  owner=$(port_owner "$p"); [ "$p" = 4369 ] && owner=epmd
  if ! pid_alive "$owner" && port_busy 127.0.0.1 "$p"; then
    echo "openstack:up: port 127.0.0.1:$p ($owner) is taken by another process" >&2; exit 1
  fi
done
if [ "$DRIVER" = libvirt ]; then
  for h in $COMPUTE_HOSTS; do
    if ! pid_alive "libvirtd-$h" && port_busy "$(host_addr "$h")" $LIBVIRT_PORT; then
      echo "openstack:up: port $(host_addr "$h"):$LIBVIRT_PORT (libvirtd of $h) is taken by another process" >&2; exit 1
    fi
  done
fi
echo "$DRIVER" > "$STATE/driver"

TIMINGS=$STATE/timings.txt
: > "$TIMINGS"
t_phase=$T0
step() { local now; now=$(date +%s); echo "$1 $((now - t_phase))s" >> "$TIMINGS"; t_phase=$now; echo "openstack:up: $1 done (+$((now - T0))s)"; }
start() { # name command... — own session, so a caller's Ctrl-C or process group cannot take it down
  local name=$1; shift
  pid_alive "$name" && return 0
  setsid "$@" >> "$LOG/$name.out" 2>&1 < /dev/null &
  echo $! > "$RUN/$name.pid"
  grep -qx "$name" "$RUN/started" 2> /dev/null || echo "$name" >> "$RUN/started" # down.sh stops in reverse
}
wait_for() { # what seconds command...
  local what=$1 secs=$2; shift 2
  for _ in $(seq "$secs"); do "$@" > /dev/null 2>&1 && return 0; sleep 1; done
  echo "openstack:up: $what did not come up in ${secs}s; see $LOG" >&2; return 1
}
http_ok() { curl -s -o /dev/null -m 5 "$1"; }

NOVA_DRIVER=$DRIVER "$STACK_HOME/install.sh"
step install
"$STACK_HOME/configure.sh" "$DRIVER"
step configure

# ---- RabbitMQ and MariaDB
export RABBITMQ_NODENAME=rabbit@localhost RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 RABBITMQ_NODE_PORT=5672 \
  ERL_EPMD_ADDRESS=127.0.0.1 ERL_EPMD_PORT=4369 RABBITMQ_MNESIA_BASE=$DATA/rabbitmq \
  RABBITMQ_LOG_BASE=$LOG/rabbitmq RABBITMQ_CONFIG_FILE=$ETC/rabbitmq \
  RABBITMQ_ENABLED_PLUGINS_FILE=$ETC/rabbitmq-plugins \
  RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}"
start epmd epmd -address 127.0.0.1 -port 4369
wait_for epmd 20 port_busy 127.0.0.1 4369
start rabbitmq env HOME="$DATA/rabbitmq" /usr/lib/rabbitmq/bin/rabbitmq-server # the erlang cookie lives in HOME
[ -d "$DATA/mysql/mysql" ] || mariadb-install-db --user=root --datadir="$DATA/mysql" \
  --auth-root-authentication-method=socket --skip-test-db > "$LOG/mariadb-install.out" 2>&1
start mariadb mariadbd --defaults-file="$ETC/my.cnf"
sql() { mariadb --socket="$RUN/mysqld.sock" "$@"; }
wait_for mariadb 60 sql -e 'select 1'
{
  for u in 127.0.0.1 localhost; do
    echo "CREATE USER IF NOT EXISTS 'openstack'@'$u' IDENTIFIED BY '$DB_PASS';"
    echo "GRANT ALL PRIVILEGES ON *.* TO 'openstack'@'$u';"
  done
  for d in keystone placement glance nova_api nova nova_cell0; do echo "CREATE DATABASE IF NOT EXISTS $d;"; done
} | sql
step mariadb

# ---- schemas: the five syncs are independent, run them side by side
dbsync() { # name command...
  local name=$1; shift
  "$@" >> "$LOG/$name-sync.out" 2>&1 || { echo "openstack:up: $name schema sync failed; see $LOG/$name-sync.out" >&2; return 1; }
}
NC="--config-file $ETC/nova/nova.conf"
nova_schema() {
  nova-manage $NC api_db sync && nova-manage $NC cell_v2 map_cell0 --database_connection "$(db_url nova_cell0)" &&
    { grep -q ' cell1 ' <<< "$(nova-manage $NC cell_v2 list_cells)" || nova-manage $NC cell_v2 create_cell --name cell1; } &&
    nova-manage $NC db sync
}
db_url() { echo "mysql+pymysql://openstack:$DB_PASS@127.0.0.1:3306/$1?charset=utf8"; }
# a re-run over schemas synced by these very packages skips the syncs (about a minute)
schema_of=$(dpkg-query -W keystone placement-common glance-common nova-common | tr '\n' ' ')
if [ "$(cat "$STATE/schemas.done" 2> /dev/null)" != "$schema_of" ]; then
  pids=()
  dbsync keystone keystone-manage --config-file "$ETC/keystone/keystone.conf" db_sync & pids+=($!)
  dbsync placement placement-manage --config-file "$ETC/placement/placement.conf" db sync & pids+=($!)
  dbsync glance glance-manage --config-file "$ETC/glance/glance-api.conf" db_sync & pids+=($!)
  dbsync nova nova_schema & pids+=($!)
  for p in "${pids[@]}"; do wait "$p"; done
  echo "$schema_of" > "$STATE/schemas.done"
fi
step schemas

# ---- Keystone
KM="keystone-manage --config-file $ETC/keystone/keystone.conf"
{
  [ -d "$DATA/keystone-fernet" ] || $KM fernet_setup --keystone-user root --keystone-group root
  [ -d "$DATA/keystone-credential" ] || $KM credential_setup --keystone-user root --keystone-group root
  $KM bootstrap --bootstrap-password "$ADMIN_PASS" --bootstrap-username admin --bootstrap-project-name admin \
    --bootstrap-role-name admin --bootstrap-admin-url $KEYSTONE/ --bootstrap-internal-url $KEYSTONE/ \
    --bootstrap-public-url $KEYSTONE/ --bootstrap-region-id RegionOne
} >> "$LOG/keystone-manage.out" 2>&1
# uwsgi serving the WSGI apps; Connection: close as Debian's own set-up answers
UWSGI="uwsgi --plugin python3 --master --die-on-term --enable-threads --lazy-apps --buffer-size 65535 --need-app
  --add-header Connection:close"
start keystone $UWSGI --http-socket 127.0.0.1:5000 --processes 1 --threads 8 \
  --env OS_KEYSTONE_CONFIG_FILES="$ETC/keystone/keystone.conf" --wsgi-file /usr/bin/keystone-wsgi-public
start placement $UWSGI --http-socket 127.0.0.1:8778 --processes 1 --threads 8 \
  --env OS_PLACEMENT_CONFIG_DIR="$ETC/placement" --wsgi-file /usr/bin/placement-api
start glance-api glance-api --config-file "$ETC/glance/glance-api.conf"
start neutron-standin python3 "$STACK_HOME/neutron_standin.py" 9696
wait_for keystone 90 http_ok $KEYSTONE
ADMIN_PASS=$ADMIN_PASS python3 "$STACK_HOME/seed.py" catalog >> "$LOG/seed.out"
wait_for rabbitmq 120 port_busy 127.0.0.1 5672
step keystone

# ---- Nova
if [ "$DRIVER" = libvirt ]; then "$STACK_HOME/libvirt-hosts.sh" start; fi
start nova-api $UWSGI --http-socket 127.0.0.1:8774 --processes 2 --threads 1 \
  --env OS_NOVA_CONFIG_DIR="$ETC/nova" --wsgi-file /usr/bin/nova-api-wsgi
start nova-conductor nova-conductor $NC --log-file "$LOG/nova-conductor.log"
start nova-scheduler nova-scheduler $NC --log-file "$LOG/nova-scheduler.log"
for h in $COMPUTE_HOSTS; do
  start "nova-compute-$h" python3 -c 'import sys; from nova.cmd.compute import main; sys.exit(main())' \
    --config-file "$ETC/nova/nova-compute.conf" --config-file "$ETC/nova/$h.conf" --log-file "$LOG/nova-compute-$h.log"
done
wait_for placement 60 http_ok http://127.0.0.1:8778/
wait_for glance 60 http_ok http://127.0.0.1:9292/
wait_for nova-api 90 http_ok http://127.0.0.1:8774/
computes_up() { [ "$(ADMIN_PASS=$ADMIN_PASS python3 "$STACK_HOME/seed.py" computes-up)" -ge 2 ]; }
wait_for "both nova-compute services" 180 computes_up
step nova

# ---- the guest image and flavor
if [ "$DRIVER" = libvirt ]; then "$STACK_HOME/guest/build.sh" "$DATA/guest"; fi
ADMIN_PASS=$ADMIN_PASS GUEST_DIR=$DATA/guest NOVA_DRIVER=$DRIVER python3 "$STACK_HOME/seed.py" images >> "$LOG/seed.out"
step seed

# ---- ready: up only once a boot on either host can succeed (ready.py lists what it still lacks). A
# nova-compute reads "up" before it has its compute node, provider and RPC server; discover_hosts maps a
# host only once its compute node exists, so it runs again while a host is unmapped.
not_ready() {
  local mapped
  mapped=$(sql -N -e 'SELECT host FROM nova_api.host_mappings' | tr '\n' ' ')
  ADMIN_PASS=$ADMIN_PASS COMPUTE_HOSTS=$COMPUTE_HOSTS MAPPED_HOSTS=$mapped SINCE=$T0 \
    python3 "$STACK_HOME/ready.py" 2>&1 | tail -n 8 || true # a failing read is one more thing missing
}
left="not checked" deadline=$(($(date +%s) + 180))
while [ "$(date +%s)" -lt $deadline ]; do
  left=$(not_ready)
  [ -z "$left" ] && break
  { date +%T; echo "$left"; } >> "$LOG/ready.out"
  if grep -q "not mapped to a cell" <<< "$left"; then
    nova-manage $NC cell_v2 discover_hosts --verbose >> "$LOG/discover-hosts.out" 2>&1 || true
  fi
  sleep 2
done
if [ -n "$left" ]; then
  echo "openstack:up: a boot would still fail after 180s; what it lacks:" >&2
  sed 's/^/  /' <<< "$left" >&2
  exit 1
fi
step ready

cat > "$STATE/openrc" << OPENRC
export OS_AUTH_URL=$KEYSTONE
export OS_IDENTITY_API_VERSION=3
export OS_USERNAME=admin
export OS_PASSWORD=$ADMIN_PASS
export OS_PROJECT_NAME=admin
export OS_USER_DOMAIN_NAME=Default
export OS_PROJECT_DOMAIN_NAME=Default
export OS_REGION_NAME=RegionOne
export OS_INTERFACE=public
OPENRC
echo "total $(($(date +%s) - T0))s" >> "$TIMINGS"
echo "openstack:up: up in $(($(date +%s) - T0))s with NOVA_DRIVER=$DRIVER (Keystone $KEYSTONE, admin/$ADMIN_PASS and demo/$ADMIN_PASS," \
  "hosts $COMPUTE_HOSTS, image drainer-guest, flavor drainer.guest; logs in $LOG)"
echo "$STATE/openrc"
