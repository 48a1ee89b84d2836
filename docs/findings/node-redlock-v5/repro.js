// Standalone reproduction of docs/findings/node-redlock-v5.md (run it with repro.sh).
//
//   node repro.js v5|v4|v5-own-value PORT1 PORT2 PORT3 PORT4 PORT5
//
// Five redis-servers, used as node-redlock's README shows: `new Redlock([five ioredis
// clients], settings)`, `redlock.acquire([resource], ttl)`, `redlock.release(lock)`.
// v5 = redlock 5.0.0-beta.2 (the bug), v4 = redlock 4.2.0 (the control), v5-own-value =
// redlock 5.0.0-beta.2 with an acquire script that accepts a key already holding the client's
// own value (passed through v5's `scripts.acquireScript` option), the change that
// node-redlock PR #369 makes to ACQUIRE_SCRIPT (its "F2"), to see whether it alone ends a
// split. Two parts:
//
// 1. Split vote. Three clients A, B and C try at once. Each one's links to the masters it
//    should not win are held back (a small gate proxy below) until the others' requests have
//    been served there, so the split is the same every run: A wins n1 and n2, B n3 and n4,
//    C n5. Nobody has three. Then every link is open and nothing else interferes. v4 gives
//    back what a failed try won (redlock.js 418-428) and the first retry wins. v5 retries with
//    the same value and keeps what it won (dist/cjs/index.js 281-298); its acquire script
//    refuses any existing key, its own included (lines 12-16), so every retry of every client
//    fails until the keys expire, TTL later.
// 2. A grant whose validity ran out. n4 and n5 are shut down (a minority: Redlock tolerates
//    it), n3 sleeps 1.5 s (DEBUG SLEEP), longer than the 1 s TTL. n3's late answer completes
//    the majority. v4 sees the expiration passed and refuses (redlock.js 419). v5 returns the
//    lock (dist/cjs/index.js 213-217: no check), its expiration already in the past, and the
//    keys it set on n1 and n2 already gone.
//
// Prints `BUG REPRODUCED: ...` and exits 1 if either part shows the v5 behaviour, else
// `not reproduced: ...` and exits 0.
'use strict';

const net = require('net');
const Redis = require('ioredis');

const [which, ...portArgs] = process.argv.slice(2);
if (!['v4', 'v5', 'v5-own-value'].includes(which) || portArgs.length !== 5) {
  console.error('usage: node repro.js v5|v4|v5-own-value PORT1 PORT2 PORT3 PORT4 PORT5');
  process.exit(2);
}
const PKG = which === 'v4' ? 'redlock4' : 'redlock'; // redlock4 = npm:redlock@4.2.0
const Redlock = which === 'v4' ? require('redlock4') : require('redlock').default;
const PORTS = portArgs.map(Number);
// The installed version (redlock's package.json is not in its "exports").
const versionOf = (pkg) => require('path').join(__dirname, 'node_modules', pkg, 'package.json');
const VERSION = JSON.parse(require('fs').readFileSync(versionOf(PKG), 'utf8')).version.replace(/^v/, '');
const MASTERS = ['n1', 'n2', 'n3', 'n4', 'n5'];
const TTL = 1000;
// v5's ACQUIRE_SCRIPT (dist/cjs/index.js 10-25) with one change: a key that already holds this
// request's value (ARGV[1]) does not refuse it; it is set again, with a new PX.
const OWN_VALUE_SCRIPT = `
  for i, key in ipairs(KEYS) do
    local held = redis.call("get", key)
    if held and held ~= ARGV[1] then
      return 0
    end
  end
  for i, key in ipairs(KEYS) do
    redis.call("set", key, ARGV[1], "PX", ARGV[2])
  end
  return #KEYS
`;
const scripts = which === 'v5-own-value' ? { acquireScript: () => OWN_VALUE_SCRIPT } : {};
const label = () => `redlock ${VERSION}${which === 'v5-own-value' ? ' with an acquire script that accepts its own value' : ''}`;
const HOST = '127.0.0.1';

let t0 = Date.now();
const now = () => Date.now() - t0;
const log = (s) => console.log(`${String(now()).padStart(6)} ms  ${s}`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const ready = (c) => (c.status === 'ready' ? null : new Promise((r) => c.once('ready', r)));

// One admin connection per master, to look at the keys (never used by a lock client).
const admin = PORTS.map((port) => new Redis({ port, host: HOST }));

// A TCP proxy to one master whose client-to-server direction can be held back.
function gate(port) {
  const g = { held: false, queue: [] };
  g.server = net.createServer((down) => {
    const up = net.connect(port, HOST);
    down.setNoDelay(true);
    up.setNoDelay(true);
    down.on('data', (d) => (g.held ? g.queue.push([up, d]) : up.write(d)));
    up.on('data', (d) => down.write(d));
    const end = () => { down.destroy(); up.destroy(); };
    down.on('close', end);
    up.on('close', end);
    down.on('error', () => {});
    up.on('error', () => {});
  });
  g.hold = () => { g.held = true; };
  g.open = () => {
    g.held = false;
    for (const [up, d] of g.queue.splice(0)) up.write(d);
  };
  return new Promise((resolve) => g.server.listen(0, HOST, () => {
    g.port = g.server.address().port;
    resolve(g);
  }));
}

// Who owns a lock value (the acquire script's ARGV[1]), learnt from the requests themselves.
const owners = new Map();
const who = (value) => (value === null ? 'none' : owners.get(value) || 'someone else');

// Every answer to the acquire script (args: script or sha, 1, key, value, ttl) is recorded
// as a vote, with the key's holder on that master right after it (read by the admin link).
// A client's k-th answer from a master belongs to its k-th try.
const tries = {}; // owner -> [ {votes: []} ]
const answered = {}; // owner/master -> count
let ownRefusals = 0;
let triesBeforeFirstGrant = 0;
let retriesBeforeFirstGrant = 0;
let firstGrantAt = null;
function trace(client, owner, master, key) {
  const send = client.sendCommand.bind(client);
  client.sendCommand = (cmd, stream) => {
    if ((cmd.name === 'evalsha' || cmd.name === 'eval') && cmd.args.length === 5 && cmd.args[2] === key) {
      const value = String(cmd.args[3]);
      owners.set(value, owner);
      cmd.promise.then(async (result) => {
        const k = (answered[owner + master] = (answered[owner + master] || 0) + 1);
        const holder = who(await admin[MASTERS.indexOf(master)].get(key));
        const list = (tries[owner] = tries[owner] || []);
        const t = (list[k - 1] = list[k - 1] || { votes: [] });
        t.votes.push({ master, set: Number(result) === 1, holder });
        if (t.votes.length === MASTERS.length) printTry(owner, k, t.votes);
      }, () => {}); // NOSCRIPT: the library sends the script itself next
    }
    return send(cmd, stream);
  };
}
function printTry(owner, k, votes) {
  votes.sort((a, b) => a.master.localeCompare(b.master));
  const yes = votes.filter((v) => v.set).length;
  const parts = votes.map((v) => {
    if (v.set) return `${v.master} SET`;
    if (v.holder === owner) return `${v.master} refused (holds ${owner}'s own value)`;
    if (v.holder === 'none') return `${v.master} refused (its key expired right after)`;
    return `${v.master} refused (holds ${v.holder})`;
  });
  const own = votes.filter((v) => !v.set && v.holder === owner).length;
  if (firstGrantAt === null) {
    ownRefusals += own;
    if (yes < 3) triesBeforeFirstGrant += 1;
    if (yes < 3 && k > 1) retriesBeforeFirstGrant += 1;
  }
  log(`${owner} try ${k}: ${yes}/5 [${parts.join(', ')}]`);
}

async function splitVote() {
  console.log(`== part 1: split vote (3 clients, ttl ${TTL} ms, retryJitter 0, retryDelay A 230, B 270, C 310 ms)`);
  const key = 'split-vote';
  const first = { A: ['n1', 'n2'], B: ['n3', 'n4'], C: ['n5'] };
  const delay = { A: 230, B: 270, C: 310 };
  const gates = [];
  const redlocks = {};
  for (const owner of Object.keys(first)) {
    const clients = [];
    for (const [i, master] of MASTERS.entries()) {
      const g = await gate(PORTS[i]);
      gates.push(g);
      const c = new Redis({ port: g.port, host: HOST });
      await ready(c);
      trace(c, owner, master, key);
      if (!first[owner].includes(master)) g.hold();
      clients.push(c);
    }
    redlocks[owner] = new Redlock(clients, {
      driftFactor: 0.01, retryCount: 10, retryDelay: delay[owner], retryJitter: 0,
    }, scripts);
  }
  t0 = Date.now();
  const results = Object.keys(first).map(async (owner) => {
    const redlock = redlocks[owner];
    try {
      const lock = await redlock.acquire([key], TTL);
      const left = lock.expiration - Date.now();
      if (firstGrantAt === null) firstGrantAt = now();
      const tries = typeof lock.attempts === 'number' ? lock.attempts : lock.attempts.length;
      const past = left < 0 && tries > 1 ? ' (v5 counts it from the start of the first try: #296/#299)' : '';
      log(`${owner} acquire() resolved: granted after ${tries} tries, lock.expiration ${left >= 0 ? `${left} ms ahead` : `${-left} ms ago`}${past}`);
      await sleep(20);
      await redlock.release(lock);
      log(`${owner} released`);
    } catch (e) {
      log(`${owner} acquire() rejected: ${e.name}: ${e.message}`);
    }
  });
  // Wait until every master holds a key (the un-held requests were served), then open all.
  for (let i = 0; ; i++) {
    const n = (await Promise.all(admin.map((a) => a.exists(key)))).reduce((s, x) => s + x, 0);
    if (n === 5) break;
    if (i > 1000) throw new Error('the first requests were not served');
    await sleep(2);
  }
  const holders = await Promise.all(admin.map((a) => a.get(key)));
  log(`split: ${MASTERS.map((m, i) => `${m}=${who(holders[i])}`).join(' ')}; every held-back link opened now`);
  for (const g of gates) g.open();
  await Promise.all(results);
  for (const r of Object.values(redlocks)) await r.quit().catch(() => {});
  for (const g of gates) g.server.close();
  const stuck = firstGrantAt !== null ? firstGrantAt >= TTL : true;
  console.log(`-- part 1: first grant ${firstGrantAt === null ? "never" : `at ${firstGrantAt} ms`}; `
    + `${triesBeforeFirstGrant} tries (${retriesBeforeFirstGrant} of them retries) failed before it, with ${ownRefusals} refusal(s) by a master holding the client's own value`);
  return { stuck };
}

async function slowMaster() {
  console.log(`== part 2: one slow master completes the majority (n4, n5 shut down; n3 DEBUG SLEEP 1.5 s; ttl ${TTL} ms, retryCount 0)`);
  const key = 'slow-master';
  const clients = PORTS.map((port) => new Redis({ port, host: HOST, enableOfflineQueue: false }));
  for (const c of clients) { c.on('error', () => {}); await ready(c); }
  const redlock = new Redlock(clients, { driftFactor: 0.01, retryCount: 0, retryDelay: 200, retryJitter: 0 }, scripts);
  for (const i of [3, 4]) {
    admin[i].disconnect();
    const c = new Redis({ port: PORTS[i], host: HOST, retryStrategy: () => null });
    c.on('error', () => {});
    await ready(c);
    await c.call('SHUTDOWN', 'NOSAVE').catch(() => {}); // no reply: the connection closes
  }
  while (clients[3].status === 'ready' || clients[4].status === 'ready') await sleep(5);
  t0 = Date.now();
  log('n4 and n5 shut down; n3: DEBUG SLEEP 1.5');
  const sleeper = new Redis({ port: PORTS[2], host: HOST });
  await ready(sleeper);
  const slept = sleeper.call('DEBUG', 'SLEEP', '1.5');
  await sleep(50);
  log(`acquire(["${key}"], ${TTL})`);
  let expired = false;
  try {
    const lock = await redlock.acquire([key], TTL);
    const at = Date.now();
    const left = lock.expiration - at;
    log(`acquire() resolved: granted, lock.expiration ${left >= 0 ? `${left} ms ahead` : `${-left} ms ago`}`);
    const pttl = await Promise.all(admin.slice(0, 3).map((a) => a.pttl(key)));
    log(`the key's PTTL now: ${pttl.map((p, i) => `${MASTERS[i]} ${p === -2 ? 'gone' : `${p} ms`}`).join(', ')}; n4, n5 down`);
    expired = left < 0;
    await redlock.release(lock).catch(() => {});
  } catch (e) {
    log(`acquire() rejected: ${e.name}: ${e.message}`);
  }
  await slept;
  sleeper.disconnect();
  for (const c of clients) c.disconnect();
  console.log(`-- part 2: ${expired ? 'acquire() returned a lock whose validity had already run out' : 'no expired lock was returned'}`);
  return { expired };
}

(async () => {
  for (const a of admin) await ready(a);
  console.log(`installed: redlock ${VERSION}, ioredis ${require('ioredis/package.json').version}; node ${process.version}; mode ${which}`);
  const one = await splitVote();
  const two = await slowMaster();
  for (const a of admin) a.disconnect();
  const found = [];
  if (one.stuck) found.push(`no client was granted while the split's keys lived (${firstGrantAt === null ? 'no grant at all' : `first grant at ${firstGrantAt} ms, TTL ${TTL} ms`}; ${ownRefusals} refusals by a master holding the client's own value)`);
  if (two.expired) found.push('acquire() returned a lock whose expiration had already passed');
  if (found.length) {
    console.log(`BUG REPRODUCED: ${label()}: ${found.join('; and ')}.`);
    process.exit(1);
  }
  console.log(`not reproduced: ${label()} granted a retry after the split (first grant at ${firstGrantAt} ms) and refused the grant that came after its validity.`);
  process.exit(0);
})().catch((e) => {
  console.error(e);
  process.exit(2);
});
