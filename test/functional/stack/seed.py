#!/usr/bin/python3
"""What up.sh registers through the real APIs, idempotently (seed.py catalog | computes-up | images).

catalog      the service catalog, a `service` project and the non-admin user demo (project demo)
computes-up  prints how many nova-compute services report up
images       flavor drainer.guest and image drainer-guest (and its behaviour variants)
"""
import os
import sys

from keystoneauth1 import session
from keystoneauth1.identity import v3

PASSWORD = os.environ.get("ADMIN_PASS", "secret")
KEYSTONE = "http://127.0.0.1:5000/v3"
SESSION = session.Session(auth=v3.Password(
    auth_url=KEYSTONE, username="admin", password=PASSWORD, project_name="admin",
    user_domain_id="default", project_domain_id="default"))
IDENTITY = {"service_type": "identity", "interface": "public"}
COMPUTE = {"service_type": "compute", "interface": "public"}
IMAGE = {"service_type": "image", "interface": "public"}


def call(method, path, where, **kw):
    return SESSION.request(path, method, endpoint_filter=where, **kw)


def compute(method, path, **kw):
    kw.setdefault("headers", {})["OpenStack-API-Version"] = "compute 2.74"
    return call(method, path, COMPUTE, **kw)


def identity_one(kind, name, create):
    """The one `kind` named `name`, created with `create` when missing."""
    found = call("GET", "/%s?name=%s" % (kind, name), IDENTITY).json()[kind]
    if found:
        return found[0]["id"]
    return call("POST", "/" + kind, IDENTITY, json={kind[:-1]: create}).json()[kind[:-1]]["id"]


def catalog():
    endpoints = {
        "compute": ("nova", "http://127.0.0.1:8774/v2.1"),
        "placement": ("placement", "http://127.0.0.1:8778"),
        "image": ("glance", "http://127.0.0.1:9292"),
        "network": ("neutron", "http://127.0.0.1:9696"),
    }
    # the bootstrap session has no catalog entries yet beyond identity: address Keystone directly
    ks = {"endpoint_override": KEYSTONE}
    services = call("GET", "/services", ks).json()["services"]
    for kind, (name, url) in endpoints.items():
        svc = next((s for s in services if s["type"] == kind), None)
        if svc is None:
            svc = call("POST", "/services", ks, json={"service": {"name": name, "type": kind}}).json()["service"]
        have = {e["interface"] for e in call("GET", "/endpoints?service_id=" + svc["id"], ks).json()["endpoints"]}
        for iface in {"public", "internal", "admin"} - have:
            call("POST", "/endpoints", ks, json={"endpoint": {
                "service_id": svc["id"], "interface": iface, "url": url, "region_id": "RegionOne"}})
    SESSION.invalidate()  # the next token carries the new catalog
    identity_one("projects", "service", {"name": "service", "domain_id": "default"})
    demo_project = identity_one("projects", "demo", {"name": "demo", "domain_id": "default"})
    demo = identity_one("users", "demo", {"name": "demo", "domain_id": "default", "password": PASSWORD,
                                          "default_project_id": demo_project})
    for role in ("member", "reader"):
        role_id = identity_one("roles", role, {"name": role})
        call("PUT", "/projects/%s/users/%s/roles/%s" % (demo_project, demo, role_id), IDENTITY)
    print("catalog ok")


def computes_up():
    services = compute("GET", "/os-services?binary=nova-compute").json()["services"]
    print(sum(1 for s in services if s["state"] == "up"))


def upload(name, path, disk_format, properties=None):
    """An active image `name` with `path`'s bytes, replacing half-created leftovers."""
    images = call("GET", "/v2/images?name=" + name, IMAGE).json()["images"]
    active = [i for i in images if i["status"] == "active"]
    if active:
        return active[0]["id"]
    for i in images:
        call("DELETE", "/v2/images/" + i["id"], IMAGE)
    container = {"aki": "aki", "ari": "ari", "ami": "ami"}.get(disk_format, "bare")
    image = call("POST", "/v2/images", IMAGE, json={
        "name": name, "disk_format": disk_format, "container_format": container, "visibility": "public",
        **(properties or {})}).json()
    with open(path, "rb") as data:
        call("PUT", "/v2/images/%s/file" % image["id"], IMAGE, data=data,
             headers={"Content-Type": "application/octet-stream"})
    print("image", name, image["id"])
    return image["id"]


# Behaviour of each image, read by the guest's /init from its kernel command line (guest/init).
VARIANTS = {
    "drainer-guest": "drainer.dirty=0",
    "drainer-guest-busy": "drainer.dirty=4",
    "drainer-guest-hot": "drainer.dirty=0 drainer.hot=1",
    "drainer-guest-deaf": "drainer.dirty=0 drainer.acpi=ignore",
}


def images():
    have = {f["name"] for f in compute("GET", "/flavors").json()["flavors"]}
    if "drainer.guest" not in have:
        compute("POST", "/flavors", json={"flavor": {"name": "drainer.guest", "vcpus": 1, "ram": 256, "disk": 1}})
        print("flavor drainer.guest")
    guest = os.environ["GUEST_DIR"]
    if os.environ.get("NOVA_DRIVER") == "fake":
        # the fake driver never reads an image; nova-api only needs an active one
        os.makedirs(guest, exist_ok=True)
        blob = os.path.join(guest, "fake-root.img")
        with open(blob, "wb") as f:
            f.write(b"\0" * 1024)
        upload("drainer-guest", blob, "raw")
        return
    kernel = upload("drainer-guest-kernel", os.path.join(guest, "vmlinux"), "aki")
    ramdisk = upload("drainer-guest-initrd", os.path.join(guest, "initrd.cpio.gz"), "ari")
    for name, behaviour in VARIANTS.items():
        upload(name, os.path.join(guest, "root.img"), "raw", {
            "kernel_id": kernel, "ramdisk_id": ramdisk,
            "os_command_line": "console=ttyS0 quiet panic=-1 " + behaviour})


if __name__ == "__main__":  # ready.py imports the session and helpers
    {"catalog": catalog, "computes-up": computes_up, "images": images}[sys.argv[1]]()
