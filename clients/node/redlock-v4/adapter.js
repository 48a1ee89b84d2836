// lockpick adapter for the redlock npm package, v4 line (docs/client-protocol.md). Used as its
// README shows: one ioredis client per master, `redlock.lock(resource, ttl)`, `lock.unlock()`,
// `lock.extend(ttl)` (renew; v4 has no automatic extension). No fencing token: Redlock has none.
'use strict';

const { serve, versionOf, hostPort } = require('../protocol.js');
const Redis = require('ioredis');
const Redlock = require('redlock');

serve(async (init) => {
  const clients = init.nodes.map((node) => new Redis(hostPort(node)));
  const [minDelay, maxDelay] = init.retry_delay_ms;
  const retryDelay = Math.max(1, Math.round((minDelay + maxDelay) / 2));
  const redlock = new Redlock(clients, {
    driftFactor: 0.01, // the README's value
    // Tries spread over the acquire timeout, as lockpick's own clients retry.
    retryCount: Math.max(0, Math.floor(init.acquire_timeout_ms / retryDelay)),
    retryDelay,
    retryJitter: Math.round((maxDelay - minDelay) / 2),
  });
  // Errors of single masters are expected under faults; redlock counts them as missing votes.
  let clientErrors = 0;
  redlock.on('clientError', (e) => {
    clientErrors += 1;
    console.error('redlock clientError: ' + e.message);
  });
  const resource = 'lockpick:lock:' + init.lock;
  let held = null;
  const leaseLeft = (lock) => Math.max(0, lock.expiration - Date.now());

  return {
    adapter: 'node-redlock-v4',
    library: 'redlock',
    version: versionOf('redlock'),
    ops: {
      async acquire() {
        try {
          held = await redlock.lock(resource, init.ttl_ms);
          // owner: the value the lock SET on the masters (Lock.value), by which the server's
          // record knows this holder (docs/server-record.md).
          return { type: 'ok', token: null, lease_ms: leaseLeft(held), owner: held.value };
        } catch (e) {
          if (e instanceof Redlock.LockError) return { type: 'fail', reason: 'timeout-waiting' };
          throw e;
        }
      },
      async release() {
        const lock = held;
        held = null;
        if (!lock) return { type: 'fail', reason: 'not-owner' };
        const errorsBefore = clientErrors;
        try {
          await lock.unlock();
          return { type: 'ok' };
        } catch (e) {
          // No quorum said "deleted": if a master could not be asked, it may still hold it.
          if (e instanceof Redlock.LockError && clientErrors === errorsBefore) {
            return { type: 'fail', reason: 'not-owner' };
          }
          return { type: 'info', reason: e.message };
        }
      },
      async renew() {
        if (!held) return { type: 'fail', reason: 'lost' };
        try {
          await held.extend(init.ttl_ms);
          return { type: 'ok', lease_ms: leaseLeft(held) };
        } catch (e) {
          if (e instanceof Redlock.LockError) return { type: 'fail', reason: 'lost' };
          throw e;
        }
      },
    },
  };
});
