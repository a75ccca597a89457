#!/usr/bin/env bash
# Installs the Debian packages the stack runs from, without letting them start any service.
# The libvirt driver's packages are skipped when NOVA_DRIVER=fake.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

pkgs="keystone placement-api nova-api nova-conductor nova-scheduler glance-api rabbitmq-server
  mariadb-server python3-pymysql uwsgi-plugin-python3 python3-novaclient curl"
if [ "${NOVA_DRIVER:-libvirt}" != fake ]; then
  # nova-compute's own .deb is not needed (its entry point is in python3-nova) and pulls in far more.
  pkgs="$pkgs qemu-system-x86 qemu-utils python3-libvirt busybox-static xz-utils cpio"
  # libvirt from bookworm-backports (11.x): its qemu.conf shared_filesystems lets two libvirtds on one
  # machine treat the common instances_path as shared storage; bookworm's 9.0 refuses to live-migrate
  # a disk on a local file system ("Migration without shared storage is unsafe").
  backports="libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients libvirt0"
fi
installed() { dpkg-query -W -f='${Status} ${Version}\n' "$1" 2> /dev/null | grep -q '^install ok installed'; }
missing=$(for p in $pkgs; do installed "$p" || echo "$p"; done)
old_libvirt=$(for p in ${backports:-}; do
  dpkg-query -W -f='${Status} ${Version}\n' "$p" 2> /dev/null | grep -q '^install ok installed .*bpo' || echo "$p"
done)
if [ "${NOVA_DRIVER:-libvirt}" != fake ]; then
  # libvirt's QEMU driver looks its built-in user and group up at start even when qemu.conf says root;
  # Debian's libvirt-daemon-system (not installed: it brings the systemd units) would create them.
  getent group libvirt-qemu > /dev/null || groupadd --system libvirt-qemu
  getent passwd libvirt-qemu > /dev/null ||
    useradd --system --no-create-home --home-dir /var/lib/libvirt --shell /usr/sbin/nologin -g libvirt-qemu libvirt-qemu
fi
[ -z "$missing" ] && [ -z "$old_libvirt" ] && exit 0
echo "installing: $(echo $missing $old_libvirt)"
# Debian's maintainer scripts would start rabbitmq, mariadb, libvirtd ...: policy-rc.d forbids it.
own_policy=0
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && own_policy=1
fi
trap '[ $own_policy = 1 ] && rm -f /usr/sbin/policy-rc.d' EXIT
# Every OpenStack debconf question answered "do not configure": up.sh writes its own configs.
for q in keystone/configure_db keystone/create-admin-tenant keystone/register-endpoint \
  nova/configure_db nova/configure_rabbit nova/configure_ksat nova/configure_neutron \
  nova/configure_placement novaapi/configure_db nova/configure_api-endpoint glance/configure_db \
  glance/configure_ksat glance/configure_rabbit glance/configure_api-endpoint \
  placement/configure_db placement/configure_ksat placement/configure_api-endpoint; do
  owner=${q%%/*}
  case $owner in nova) owner=nova-common ;; novaapi) owner=nova-api ;; glance) owner=glance-common ;;
    placement) owner=placement-common ;; esac
  case $q in nova/configure_api-endpoint) owner=nova-api ;; glance/configure_api-endpoint) owner=glance-api ;;
    placement/configure_api-endpoint) owner=placement-api ;; esac
  echo "$owner $q boolean false"
done | debconf-set-selections
export DEBIAN_FRONTEND=noninteractive
apt-get -o DPkg::Lock::Timeout=900 update -qq || true
[ -z "$missing" ] || apt-get -o DPkg::Lock::Timeout=900 install -y -q --no-install-recommends $missing
if [ -n "$old_libvirt" ]; then
  apt-cache policy libvirt-daemon | grep -q bookworm-backports || {
    echo "openstack:up: the libvirt driver needs libvirt 11 from bookworm-backports; add that suite to apt's sources" >&2
    exit 1
  }
  apt-get -o DPkg::Lock::Timeout=900 install -y -q --no-install-recommends -t bookworm-backports $old_libvirt
fi
