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
# grep reads whole answers (here-strings), never `cmd | grep -q` under pipefail: grep -q leaves at its
# first match, the writer then dies of SIGPIPE (141), and the pipe reads as "not found".
status_of() { dpkg-query -W -f='${Status} ${Version}\n' "$1" 2> /dev/null || true; }
installed() { grep -q '^install ok installed' <<< "$(status_of "$1")"; }
missing=$(for p in $pkgs; do installed "$p" || echo "$p"; done)
old_libvirt=$(for p in ${backports:-}; do
  grep -q '^install ok installed .*bpo' <<< "$(status_of "$p")" || echo "$p"
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
# bookworm-backports from the mirror apt already uses for bookworm, in a file of its own, said in one
# line; DRAINER_STACK_APT_SOURCES=0 leaves apt's sources alone (then the suite must be there already).
add_backports() {
  if [ "${DRAINER_STACK_APT_SOURCES:-1}" = 0 ]; then return; fi
  local mirror
  mirror=$(awk '/^URIs:/ { uri = $2 } /^Suites:/ && / bookworm( |$)/ && uri { print uri; exit }' \
    /etc/apt/sources.list.d/*.sources 2> /dev/null || true)
  [ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $3 == "bookworm" { print $2; exit }' \
    /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2> /dev/null || true)
  [ -n "$mirror" ] || mirror=http://deb.debian.org/debian
  printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    "$mirror" > /etc/apt/sources.list.d/drainer-bookworm-backports.sources
  echo "openstack:up: added bookworm-backports from $mirror to apt's sources (/etc/apt/sources.list.d/drainer-bookworm-backports.sources) for libvirt 11; DRAINER_STACK_APT_SOURCES=0 turns this off"
}
export DEBIAN_FRONTEND=noninteractive
apt-get -o DPkg::Lock::Timeout=900 update -qq || true
[ -z "$missing" ] || apt-get -o DPkg::Lock::Timeout=900 install -y -q --no-install-recommends $missing
if [ -n "$old_libvirt" ]; then
  if ! grep -q bookworm-backports <<< "$(apt-cache policy libvirt-daemon)"; then
    add_backports
    apt-get -o DPkg::Lock::Timeout=900 update -qq || true
  fi
  grep -q bookworm-backports <<< "$(apt-cache policy libvirt-daemon)" || {
    echo "openstack:up: the libvirt driver needs libvirt 11 from bookworm-backports, and apt does not offer it; add that suite to apt's sources" >&2
    exit 1
  }
  apt-get -o DPkg::Lock::Timeout=900 install -y -q --no-install-recommends -t bookworm-backports $old_libvirt
fi
