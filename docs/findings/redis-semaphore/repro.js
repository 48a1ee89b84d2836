// Standalone reproduction of docs/findings/redis-semaphore.md (run it with repro.sh).
//
//   node repro.js slow|no-fault PORT1 PORT2 PORT3 PORT4 PORT5
//
// Five redis-servers, used as redis-semaphore's README shows for Redlock: `new RedlockMutex([five
// ioredis clients], key, { lockTimeout })`, `await mutex.acquire()`, `await mutex.release()`.
// Two clients, A and B, each with its own five connections (two processes, in real life).
//
// slow: n5 sleeps 1.5 s (DEBUG SLEEP), longer than lockTimeout (1 s), while A acquires.
//   acquireRedlockMutex (lib/redlockMutex/acquire.js 20-28) sends SET NX PX 1000 to all five
//   and waits for every answer (Promise.all), n5's included, then grants on the count alone:
//   A's acquire() resolves after 1.5 s, when the keys it set on n1-n4 have been gone for about
//   0.5 s. B then asks and is granted at once (n1-n4 are free): two holders. A's refresh timer
//   (every 0.8 x lockTimeout) notices only later and calls onLockLost.
// no-fault: the same without the sleep: A is granted, B times out (the lock works).
//
// Prints `BUG REPRODUCED: ...` and exits 1 when B is granted while A holds, else
// `not reproduced: ...` and exits 0.
'use strict';

const Redis = require('ioredis');
const { RedlockMutex } = require('redis-semaphore');

const [mode, ...portArgs] = process.argv.slice(2);
if (!['slow', 'no-fault'].includes(mode) || portArgs.length !== 5) {
  console.error('usage: node repro.js slow|no-fault PORT1 PORT2 PORT3 PORT4 PORT5');
  process.exit(2);
}
const PORTS = portArgs.map(Number);
const MASTERS = ['n1', 'n2', 'n3', 'n4', 'n5'];
const HOST = '127.0.0.1';
const LOCK_TIMEOUT = 1000;
const SLEEP_S = 1.5;
const KEY = 'repro'; // RedlockMutex stores it as `mutex:repro`

let t0 = Date.now();
const now = () => Date.now() - t0;
const log = (s) => console.log(`${String(now()).padStart(6)} ms  ${s}`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const ready = (c) => (c.status === 'ready' ? null : new Promise((r) => c.once('ready', r)));
const connect = () => PORTS.map((port) => new Redis({ port, host: HOST }));

// Each master's key: whose identifier it holds, and its PTTL.
async function keys(admin, owners) {
  const got = await Promise.all(admin.map(async (a) => [await a.get(`mutex:${KEY}`), await a.pttl(`mutex:${KEY}`)]));
  return got.map(([v, p], i) => `${MASTERS[i]} ${v === null ? 'gone' : `${owners[v] || '?'} ${p} ms`}`).join(', ');
}

(async () => {
  const admin = connect();
  const a = connect();
  const b = connect();
  for (const c of [...admin, ...a, ...b]) await ready(c);
  const version = require('redis-semaphore/package.json').version;
  console.log(`installed: redis-semaphore ${version}, ioredis ${require('ioredis/package.json').version}; node ${process.version}; mode ${mode}`);
  console.log(`== RedlockMutex over n1..n5, lockTimeout ${LOCK_TIMEOUT} ms${mode === 'slow' ? `; n5: DEBUG SLEEP ${SLEEP_S} while A acquires` : ''}`);

  const lost = [];
  const options = (name, acquireTimeout) => ({
    lockTimeout: LOCK_TIMEOUT,
    acquireTimeout,
    onLockLost: (e) => { lost.push(name); log(`${name}: onLockLost: ${e.message}`); },
  });
  const A = new RedlockMutex(a, KEY, options('A', 10000));
  const B = new RedlockMutex(b, KEY, options('B', 500));
  const owners = { [A.identifier]: 'A', [B.identifier]: 'B' };

  t0 = Date.now();
  let slept = null;
  let sleeper = null;
  if (mode === 'slow') {
    sleeper = new Redis({ port: PORTS[4], host: HOST });
    await ready(sleeper);
    slept = sleeper.call('DEBUG', 'SLEEP', String(SLEEP_S));
    log(`n5: DEBUG SLEEP ${SLEEP_S} sent`);
    await sleep(50);
  }
  log('A: acquire()');
  const aStart = Date.now();
  await A.acquire();
  log(`A: acquire() resolved after ${Date.now() - aStart} ms; A.isAcquired = ${A.isAcquired}`);
  log(`the key now: ${await keys(admin, owners)}`);

  log('B: acquire() (acquireTimeout 500 ms)');
  const bStart = Date.now();
  let both = false;
  let bGrantedAfter = null;
  try {
    await B.acquire();
    bGrantedAfter = Date.now() - bStart;
    both = A.isAcquired && B.isAcquired;
    log(`B: acquire() resolved after ${bGrantedAfter} ms; A.isAcquired = ${A.isAcquired}, B.isAcquired = ${B.isAcquired}`);
    log(`the key now: ${await keys(admin, owners)}`);
  } catch (e) {
    log(`B: acquire() rejected: ${e.name}: ${e.message}`);
  }

  // Let A's refresh timer (every 0.8 x lockTimeout) run once.
  await sleep(LOCK_TIMEOUT);
  log(`after ${LOCK_TIMEOUT} ms more: A.isAcquired = ${A.isAcquired}, B.isAcquired = ${B.isAcquired}`);
  await A.release().catch((e) => log(`A: release() rejected: ${e.message}`));
  await B.release().catch((e) => log(`B: release() rejected: ${e.message}`));
  if (slept) await slept;
  if (sleeper) sleeper.disconnect();
  for (const c of [...admin, ...a, ...b]) c.disconnect();

  if (both) {
    console.log(`BUG REPRODUCED: redis-semaphore ${version} RedlockMutex.acquire() returned after one slow master's answer, when the keys it set on the other four had expired, and a second client was granted the same mutex ${bGrantedAfter} ms later while the first still held it${lost.includes('A') ? ' (A\'s onLockLost came only afterwards)' : ''}.`);
    process.exit(1);
  }
  console.log(`not reproduced: ${bGrantedAfter === null ? 'B was refused while A held the mutex' : 'B was granted only after A no longer held it'}.`);
  process.exit(0);
})().catch((e) => {
  console.error(e);
  process.exit(2);
});
