// lockpick adapter for redis-semaphore (docs/client-protocol.md), used as its README shows:
// `new Mutex(redis, key, options)` on the first node, or with init extra `"redlock": true`
// `new RedlockMutex([redis, …], key, options)` on all nodes; `await mutex.acquire()`,
// `await mutex.release()`. The library refreshes the lock by itself every
// `refreshInterval` (default: 0.8 × lockTimeout) while it is held; init extra
// `"refresh": false` sets `refreshInterval: 0` (no refresh). A lost lock is reported through
// `onLockLost` (whose default throws an unhandled error): told to lockpick at once as a `lost`
// event (protocol 2), and remembered for the release. No fencing token, no manual extension.
'use strict';

const { serve, versionOf, hostPort, event } = require('../protocol.js');
const Redis = require('ioredis');
const { Mutex, RedlockMutex, TimeoutError } = require('redis-semaphore');

serve(async (init) => {
  const clients = init.nodes.map((node) => new Redis(hostPort(node)));
  const redlock = init.extra.redlock === true;
  const refresh = init.extra.refresh !== false;
  const key = 'lockpick:lock:' + init.lock;
  const [minDelay, maxDelay] = init.retry_delay_ms;
  let held = null;

  function options(lost) {
    return {
      lockTimeout: init.ttl_ms,
      acquireTimeout: init.acquire_timeout_ms,
      retryInterval: Math.max(1, Math.round((minDelay + maxDelay) / 2)),
      ...(refresh ? {} : { refreshInterval: 0 }),
      onLockLost: (e) => {
        console.error('redis-semaphore: ' + e.message);
        lost.error = e;
        event('lost', { reason: e.message });
      },
    };
  }

  return {
    adapter: (redlock ? 'node-redis-semaphore-redlock-mutex' : 'node-redis-semaphore-mutex')
      + (refresh ? '' : '-no-refresh'),
    library: 'redis-semaphore',
    version: versionOf('redis-semaphore'),
    // onLockLost: a refresh found the key gone or taken. The library has no suspended or
    // reconnected signal.
    events: ['lost'],
    ops: {
      async acquire() {
        const lost = { error: null };
        const mutex = redlock
          ? new RedlockMutex(clients, key, options(lost))
          : new Mutex(clients[0], key, options(lost));
        try {
          await mutex.acquire();
        } catch (e) {
          if (e instanceof TimeoutError) return { type: 'fail', reason: 'timeout-waiting' };
          throw e;
        }
        held = { mutex, lost };
        // The library does not say how long the lock it granted stays valid (RedlockMutex
        // grants on a quorum alone, with no elapsed-time or drift check): no lease claimed.
        return { type: 'ok', token: null, lease_ms: null };
      },
      async release() {
        const lock = held;
        held = null;
        if (!lock) return { type: 'fail', reason: 'not-owner' };
        // release() does not say whether the key was still ours; a refresh that found it
        // gone did (onLockLost).
        await lock.mutex.release();
        if (lock.lost.error) return { type: 'fail', reason: 'lost: ' + lock.lost.error.message };
        return { type: 'ok' };
      },
    },
  };
});
