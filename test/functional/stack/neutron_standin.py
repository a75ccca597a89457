#!/usr/bin/python3
"""The stack's one stand-in: a Neutron that has no ports, networks or extensions.

Nova asks Neutron even for servers booted with "networks": "none" (the extension list, the server's
ports at boot, migration and delete). A real neutron-server would need ML2 and agents; every question
Nova asks has the answer "nothing", so this answers empty collections, 404 for single objects and 501
for writes. Listens on 127.0.0.1 only.
"""
import json
import re
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT = int(sys.argv[1])
COLLECTION = re.compile(r"^/v2\.0/([a-z0-9_-]+?)(?:\.json)?$")


class NoNetworks(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def answer(self, status, body):
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self):
        path = self.path.split("?", 1)[0].rstrip("/")
        if path == "":
            link = {"rel": "self", "href": "http://127.0.0.1:%d/v2.0/" % PORT}
            return self.answer(200, {"versions": [{"id": "v2.0", "status": "CURRENT", "links": [link]}]})
        if path == "/v2.0":
            return self.answer(200, {"resources": []})
        found = COLLECTION.match(path)
        if found:
            return self.answer(200, {found.group(1).replace("-", "_"): []})
        return self.answer(404, {"NeutronError": {"type": "NotFound", "message": "no such object", "detail": ""}})

    def do_DELETE(self):
        self.answer(404, {"NeutronError": {"type": "NotFound", "message": "no such object", "detail": ""}})

    def do_POST(self):
        self.answer(501, {"NeutronError": {"type": "NotImplemented", "message": "this Neutron has no networks",
                                           "detail": ""}})

    do_PUT = do_POST

    def log_message(self, fmt, *args):
        sys.stderr.write("neutron-standin: " + (fmt % args) + "\n")


ThreadingHTTPServer(("127.0.0.1", PORT), NoNetworks).serve_forever()
