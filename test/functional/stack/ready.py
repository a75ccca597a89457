#!/usr/bin/python3
"""What a boot still needs from the stack up.sh started: one line each, nothing once a server can be booted.

ready.py           reads the stack through its APIs (env: ADMIN_PASS, COMPUTE_HOSTS, MAPPED_HOSTS, SINCE)
ready.py --check   reads that snapshot as JSON on stdin instead (what test/functional/stack-ready.test.ts feeds)

A nova-compute is "up" from the moment its service record is written, before it has created its compute node
and resource provider and before it listens on RabbitMQ; discover_hosts run in that window maps nothing. A boot
then ends ERROR (no allocation candidate, or a host not mapped to a cell) or waits on a queue nobody reads. So
up.sh waits for each of these instead:
- nova-conductor, nova-scheduler and each nova-compute up, with a heartbeat since this up began (a service
  heartbeats only once its RPC server runs), each nova-compute enabled;
- each compute host's resource provider in Placement with VCPU, MEMORY_MB and DISK_GB inventory and without
  COMPUTE_STATUS_DISABLED, and the host mapped to a cell;
- flavor drainer.guest and an active image drainer-guest.
"""
import datetime
import json
import os
import sys

BINARIES = ("nova-conductor", "nova-scheduler", "nova-compute")
CLASSES = ("VCPU", "MEMORY_MB", "DISK_GB")
FLAVOR = "drainer.guest"
IMAGE = "drainer-guest"


def heartbeat(updated_at):
    """Seconds since the epoch of Nova's updated_at (UTC, no zone), or None."""
    if not updated_at:
        return None
    when = datetime.datetime.fromisoformat(updated_at.rstrip("Z")).replace(tzinfo=datetime.timezone.utc)
    return when.timestamp()


def missing(snap, hosts, since):
    """What the snapshot still lacks for a boot on every host in `hosts`, one string each."""
    out = []
    services = snap.get("services", [])
    for binary in BINARIES:
        for host in hosts if binary == "nova-compute" else [None]:
            name = binary + (" on " + host if host else "")
            found = [s for s in services if s["binary"] == binary and (host is None or s["host"] == host)]
            if not found:
                out.append("%s: no service record" % name)
                continue
            svc = found[0]
            beat = heartbeat(svc.get("updated_at"))
            if svc.get("state") != "up":
                out.append("%s: %s" % (name, svc.get("state")))
            elif beat is None or beat < since:
                out.append("%s: no heartbeat since this up began (its RPC server is not running yet)" % name)
            if binary == "nova-compute" and svc.get("status") != "enabled":
                out.append("%s: %s (%s)" % (name, svc.get("status"), svc.get("disabled_reason")))
    providers = snap.get("providers", {})
    mapped = set(snap.get("mapped", []))
    for host in hosts:
        rp = providers.get(host)
        if rp is None:
            out.append("%s: no compute node resource provider in Placement" % host)
        else:
            lacking = [c for c in CLASSES if c not in rp.get("inventory", [])]
            if lacking:
                out.append("%s: no %s inventory in Placement" % (host, ", ".join(lacking)))
            if "COMPUTE_STATUS_DISABLED" in rp.get("traits", []):
                out.append("%s: Placement marks it COMPUTE_STATUS_DISABLED" % host)
        if host not in mapped:
            out.append("%s: not mapped to a cell (discover_hosts)" % host)
    if not snap.get("flavor"):
        out.append("flavor %s: missing" % FLAVOR)
    if snap.get("image") != "active":
        out.append("image %s: %s" % (IMAGE, snap.get("image") or "missing"))
    return out


def snapshot(hosts, mapped):
    """The stack as its APIs show it now (the shape missing() reads)."""
    import seed  # keystoneauth1: only where the stack runs

    placement = {"service_type": "placement", "interface": "public"}
    pmv = {"OpenStack-API-Version": "placement 1.6"}
    services = seed.compute("GET", "/os-services").json()["services"]
    # 2.53+: a hypervisor's id is its compute node's UUID, which is its resource provider's UUID
    nodes = {h["service"]["host"]: h["id"] for h in seed.compute("GET", "/os-hypervisors/detail").json()["hypervisors"]}
    providers = {}
    for host in hosts:
        if host not in nodes:
            continue
        inv = seed.call("GET", "/resource_providers/%s/inventories" % nodes[host], placement, headers=pmv, raise_exc=False)
        if inv.status_code != 200:
            continue
        traits = seed.call("GET", "/resource_providers/%s/traits" % nodes[host], placement, headers=pmv).json()["traits"]
        providers[host] = {"inventory": list(inv.json()["inventories"]), "traits": traits}
    flavors = seed.compute("GET", "/flavors").json()["flavors"]
    images = seed.call("GET", "/v2/images?name=" + IMAGE, seed.IMAGE).json()["images"]
    return {
        "services": services,
        "providers": providers,
        "mapped": mapped,
        "flavor": any(f["name"] == FLAVOR for f in flavors),
        "image": "active" if any(i["status"] == "active" for i in images) else (images[0]["status"] if images else None),
    }


def main():
    hosts = os.environ.get("COMPUTE_HOSTS", "compute-a compute-b").split()
    since = float(os.environ.get("SINCE", "0"))
    if sys.argv[1:] == ["--check"]:
        snap = json.load(sys.stdin)
    else:
        snap = snapshot(hosts, os.environ.get("MAPPED_HOSTS", "").split())
    for line in missing(snap, hosts, since):
        print(line)


if __name__ == "__main__":
    main()
