#!/usr/bin/env bash
# Writes every config of the stack under $STATE/etc (configure.sh fake|libvirt). Re-run on every up.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
DRIVER=$1
mkdir -p "$ETC"/{keystone,placement,glance,nova} "$DATA"/glance-{images,staging,tasks} "$DATA/nova/lock" \
  "$DATA/rabbitmq" "$LOG/rabbitmq"
db_url() { echo "mysql+pymysql://openstack:$DB_PASS@127.0.0.1:3306/$1?charset=utf8"; }
admin_auth() { # a keystone_authtoken-style block with the admin's password
  printf '%s\n' "auth_url = $KEYSTONE" "auth_type = password" "project_domain_name = Default" \
    "user_domain_name = Default" "project_name = admin" "username = admin" "password = $ADMIN_PASS" \
    "region_name = RegionOne"
}

echo '[].' > "$ETC/rabbitmq-plugins"
echo 'loopback_users.guest = true' > "$ETC/rabbitmq.conf"

cat > "$ETC/my.cnf" << CONF
[mysqld]
user = root
datadir = $DATA/mysql
socket = $RUN/mysqld.sock
pid-file = $RUN/mysqld.pidfile
bind-address = 127.0.0.1
port = 3306
skip-name-resolve
max_connections = 1000
innodb_buffer_pool_size = 64M
innodb_flush_log_at_trx_commit = 2
performance_schema = OFF
character-set-server = utf8mb4
collation-server = utf8mb4_general_ci
log-error = $LOG/mariadb.err
CONF

cat > "$ETC/keystone/keystone.conf" << CONF
[DEFAULT]
log_file = $LOG/keystone.log
[database]
connection = $(db_url keystone)
[token]
provider = fernet
[fernet_tokens]
key_repository = $DATA/keystone-fernet
[fernet_receipts]
key_repository = $DATA/keystone-fernet
[credential]
key_repository = $DATA/keystone-credential
CONF

cat > "$ETC/placement/placement.conf" << CONF
[DEFAULT]
log_file = $LOG/placement.log
[api]
auth_strategy = keystone
[placement_database]
connection = $(db_url placement)
[keystone_authtoken]
www_authenticate_uri = $KEYSTONE
$(admin_auth)
CONF

cp -f /etc/glance/glance-api-paste.ini "$ETC/glance/"
cat > "$ETC/glance/glance-api.conf" << CONF
[DEFAULT]
bind_host = 127.0.0.1
bind_port = 9292
workers = 1
log_file = $LOG/glance-api.log
enabled_backends = file:file
[database]
connection = $(db_url glance)
[glance_store]
default_backend = file
[file]
filesystem_store_datadir = $DATA/glance-images/
[os_glance_staging_store]
filesystem_store_datadir = $DATA/glance-staging/
[os_glance_tasks_store]
filesystem_store_datadir = $DATA/glance-tasks/
[paste_deploy]
flavor = keystone
config_file = $ETC/glance/glance-api-paste.ini
[keystone_authtoken]
www_authenticate_uri = $KEYSTONE
$(admin_auth)
CONF

# ---- Nova: nova.conf for the control plane (with DB access), nova-compute.conf + <host>.conf for the
# computes (nova-compute refuses a DB connection)
cp -f /etc/nova/api-paste.ini "$ETC/nova/"
nova_shared() {
  cat << CONF
[DEFAULT]
transport_url = rabbit://guest:guest@127.0.0.1:5672/
my_ip = 127.0.0.1
state_path = $DATA/nova
# os-stop on a guest that ignores ACPI waits this long before Nova destroys it (Nova's default is 60)
shutdown_timeout = 20
[wsgi]
api_paste_config = $ETC/nova/api-paste.ini
[keystone_authtoken]
www_authenticate_uri = $KEYSTONE
$(admin_auth)
[service_user]
send_service_user_token = true
$(admin_auth)
[placement]
$(admin_auth)
[neutron]
$(admin_auth)
[glance]
region_name = RegionOne
[cinder]
os_region_name = RegionOne
[conductor]
workers = 1
[scheduler]
workers = 1
discover_hosts_in_cells_interval = 30
[oslo_concurrency]
lock_path = $DATA/nova/lock
[vnc]
enabled = false
[oslo_messaging_notifications]
driver = noop
CONF
}
{
  nova_shared
  printf '%s\n' "[api_database]" "connection = $(db_url nova_api)" "[database]" "connection = $(db_url nova)"
} > "$ETC/nova/nova.conf"

{
  nova_shared
  if [ "$DRIVER" = fake ]; then
    printf '%s\n' "[DEFAULT]" "compute_driver = fake.FakeLiveMigrateDriver"
  else
    # One instances_path for both hosts: Nova sees shared storage and live-migrates without copying
    # disks. Migrations are capped at 16 MiB/s (DRAINER_STACK_MIGRATION_MIBPS): an idle guest moves in
    # seconds, a guest rewriting its memory flat out never converges. Root without sudo: privsep's
    # helper is started directly.
    cat << CONF
[DEFAULT]
compute_driver = libvirt.LibvirtDriver
instances_path = $DATA/instances
[libvirt]
virt_type = qemu
cpu_mode = none
live_migration_bandwidth = ${DRAINER_STACK_MIGRATION_MIBPS:-16}
live_migration_permit_auto_converge = false
live_migration_permit_post_copy = false
[nova_sys_admin]
helper_command = privsep-helper --config-file $ETC/nova/nova-compute.conf
CONF
  fi
} > "$ETC/nova/nova-compute.conf"

for h in $COMPUTE_HOSTS; do
  mkdir -p "$DATA/nova-$h"
  {
    printf '%s\n' "[DEFAULT]" "host = $h" "state_path = $DATA/nova-$h"
    if [ "$DRIVER" = fake ]; then
      echo "instances_path = $DATA/nova-$h/instances"
    else
      mkdir -p "$DATA/instances"
      # my_ip stays 127.0.0.1 on both hosts: a resize to a host with the same IP is on shared storage
      # for Nova (otherwise it would copy the disk over ssh); migrations use the inbound address.
      printf '%s\n' "[libvirt]" "connection_uri = qemu+tcp://$(host_addr "$h")/system" \
        "live_migration_inbound_addr = $(host_addr "$h")"
    fi
  } > "$ETC/nova/$h.conf"
done
