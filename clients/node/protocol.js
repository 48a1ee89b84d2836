// The lockpick client protocol (docs/client-protocol.md), versions 1 and 2, for Node adapters:
// reads JSON lines from stdin, answers one request at a time on stdout, and (version 2) writes
// an event line when the library tells its user something unasked (`event`). Diagnostics go to
// stderr; stdout carries protocol lines only.
'use strict';

const fs = require('fs');
const path = require('path');
const readline = require('readline');

// Version 1 for an adapter that sends no events; 2 for one that declares `events`.
const PROTOCOL = 1;
const PROTOCOL_EVENTS = 2;
const EVENTS = ['lost', 'suspended', 'reconnected'];
const MANIFEST = 'lockpick-adapter.json';
const TYPES = {
  bool: ['a boolean', (v) => typeof v === 'boolean'],
  integer: ['an integer', (v) => Number.isInteger(v)],
  number: ['a number', (v) => typeof v === 'number'],
  string: ['a string', (v) => typeof v === 'string'],
};

// The adapter's lockpick-adapter.json (the init options it takes), found as lockpick finds it:
// beside the adapter script or up to two folders above; null if it has none.
function declaration() {
  let folder = path.dirname(fs.realpathSync(require.main.filename));
  for (let i = 0; i < 3; i++) {
    const file = path.join(folder, MANIFEST);
    if (fs.existsSync(file)) {
      return { file, types: JSON.parse(fs.readFileSync(file, 'utf8')).init || {} };
    }
    folder = path.dirname(folder);
  }
  return null;
}

// Why the init options `extra` are not what this adapter declares, or null. An adapter
// without a declaration takes its extra as it is.
function refused(extra) {
  const declared = declaration();
  if (!declared) return null;
  const { file, types } = declared;
  const allowed = Object.keys(types).sort().map((k) => `${k} (${types[k]})`).join(', ') || 'none';
  for (const [key, value] of Object.entries(extra || {})) {
    if (!(key in types)) {
      return `init.${key}: the adapter takes no such option; allowed: ${allowed} (${file})`;
    }
    const [name, fits] = TYPES[types[key]];
    if (!fits(value)) {
      return `init.${key}: ${JSON.stringify(value)} is not allowed; allowed: ${name} (${file})`;
    }
  }
  return null;
}

function write(message) {
  process.stdout.write(JSON.stringify(message) + '\n');
}

// Tells lockpick, unasked, what the library just told its user: `name` is one of EVENTS and
// must be in the adapter's `events`; `token` (the lock's fencing token, if any) and `reason`
// (the library's words) are optional. Node runs one callback at a time, so the line never
// interleaves with a reply.
// Events told before the hello wait in `early`; once it is out, they go only if this lockpick
// takes them (its init's newest_protocol is 2 or more) and the adapter declared some.
let helloSent = false;
let eventsOn = false;
const early = [];

function event(name, { token = null, reason = null } = {}) {
  if (!EVENTS.includes(name)) throw new Error(`event ${name}: allowed: ${EVENTS.join(', ')}`);
  const line = { type: 'event', event: name, token };
  if (reason !== null) line.reason = String(reason);
  if (!helloSent) early.push(line);
  else if (eventsOn) write(line);
}

// `start(init)` builds the lock from the init message and returns
// { adapter, library, version, ops: { acquire, release, renew? }, events? }; `events` lists
// what the adapter may send with `event` (protocol 2), absent for none. Each op takes the request
// and resolves to { type: 'ok' | 'fail' | 'info', token?, lease_ms?, reason?, note?, owner? }
// (`owner` on an acquire's ok: the value by which the lock's server knows this holder, when the
// library says it; docs/server-record.md).
// A thrown error becomes `info` (the outcome is unknown) with its message as reason. Init
// options (`extra`) that the adapter's lockpick-adapter.json does not declare, or of another
// type, are answered with a `fail` before `start` is called: never a silent default.
function serve(start) {
  const input = readline.createInterface({ input: process.stdin });
  let adapter = null;
  let queue = Promise.resolve();
  input.on('line', (line) => {
    queue = queue.then(() => handle(line)).catch((e) => {
      console.error('adapter: ' + (e && e.stack || e));
      process.exit(1);
    });
  });
  // lockpick closed our stdin: finish what was asked, then go.
  input.on('close', () => queue.then(() => process.exit(0)));

  async function handle(line) {
    const request = JSON.parse(line);
    if (request.type === 'init') {
      const why = refused(request.extra);
      if (why !== null) {
        write({ type: 'fail', id: request.id, reason: why });
        return;
      }
      adapter = await start(request);
      // init's `protocol` is the oldest version lockpick speaks (1, which every adapter takes);
      // `newest_protocol`, the newest: events need 2.
      const newest = request.newest_protocol ?? request.protocol ?? PROTOCOL;
      eventsOn = Boolean(adapter.events && adapter.events.length) && newest >= PROTOCOL_EVENTS;
      if (adapter.events && adapter.events.length && !eventsOn) {
        console.error(`adapter: lockpick speaks protocol ${newest} at most: no events sent`);
      }
      const hello = {
        type: 'hello',
        id: request.id,
        protocol: eventsOn ? PROTOCOL_EVENTS : PROTOCOL,
        adapter: adapter.adapter,
        library: adapter.library,
        version: adapter.version,
        ops: Object.keys(adapter.ops),
      };
      if (eventsOn) hello.events = adapter.events;
      write(hello);
      helloSent = true;
      if (eventsOn) early.forEach(write);
      early.length = 0;
      return;
    }
    const op = adapter && adapter.ops[request.type];
    if (!op) throw new Error('unexpected request ' + line);
    let reply;
    try {
      reply = await op(request);
    } catch (e) {
      reply = { type: 'info', reason: String(e && e.message || e) };
    }
    write({ ...reply, id: request.id });
  }
}

// The installed version of `name`, read from its package.json in the adapter's node_modules
// (read as a file: packages with an `exports` map do not export their package.json).
function versionOf(name) {
  const file = path.join(require.main.path, 'node_modules', name, 'package.json');
  return JSON.parse(fs.readFileSync(file, 'utf8')).version;
}

// host and port of a "host:port" node address.
function hostPort(address) {
  const i = address.lastIndexOf(':');
  return { host: address.slice(0, i), port: Number(address.slice(i + 1)) };
}

module.exports = { serve, refused, versionOf, hostPort, event, PROTOCOL, PROTOCOL_EVENTS, EVENTS };
