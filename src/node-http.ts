// node:http and node:https for the daemon's code, without an ES import: importing node:http as an ES
// module reads every export, and its WebSocket/MessageEvent getters load undici (fetch, http2,
// webstreams) into an agent that never uses them, ~6 MB RSS and ~30 ms at start under --jitless
// (bench footprint). process.getBuiltinModule returns the same module objects (nock's patches apply).
export const http = process.getBuiltinModule('node:http');
export const https = process.getBuiltinModule('node:https');
