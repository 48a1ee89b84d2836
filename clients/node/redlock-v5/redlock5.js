// The adapter for Redlock libraries with node-redlock v5's API (redlock v5 and its fork
// @sesamecare-oss/redlock), one ioredis client per master, used as their READMEs show:
// - `redlock.acquire([resource], ttl)`, `lock.release()`, `lock.extend(ttl)` (renew), or, with
//   init extra `"auto_extend": true`,
// - `redlock.using([resource], ttl, routine)`: the library extends the lock by itself (a timer
//   `automaticExtensionThreshold` ms before expiry) while the routine runs and aborts the
//   routine's signal when an extension fails. The routine here lasts from lockpick's acquire
//   to its release. The abort is the library telling its user the lock is lost: told to
//   lockpick at once as a `lost` event (protocol 2). `acquire` alone tells nothing.
// No fencing token: Redlock has none. Each package's adapter.js passes its own classes, so that
// each resolves its own pinned dependencies.
'use strict';

const { serve, versionOf, hostPort, event } = require('../protocol.js');

// `lib`: { Redlock, ExecutionError, ResourceLockedError } of the package; `Redis`: ioredis;
// `name`: the adapter's name (`-using` is added with auto_extend); `library`: the package.
function serveRedlock5({ lib, Redis, name, library }) {
  const { Redlock, ExecutionError, ResourceLockedError } = lib;
  serve(async (init) => {
    const clients = init.nodes.map((node) => new Redis(hostPort(node)));
    const [minDelay, maxDelay] = init.retry_delay_ms;
    const retryDelay = Math.max(1, Math.round((minDelay + maxDelay) / 2));
    const autoExtend = init.extra.auto_extend === true;
    const settings = {
      driftFactor: 0.01,
      retryCount: Math.max(0, Math.floor(init.acquire_timeout_ms / retryDelay)),
      retryDelay,
      retryJitter: Math.round((maxDelay - minDelay) / 2),
      // The README's default is 500 ms before expiry; a third of the TTL keeps the same
      // proportion for short test TTLs (it must be at least 100 ms under the TTL).
      automaticExtensionThreshold: Math.round(init.ttl_ms / 3),
    };
    const redlock = new Redlock(clients, settings);
    redlock.on('error', (e) => {
      // Masters failing or refusing (the lock is taken) are expected; only log the former.
      if (!(e instanceof ResourceLockedError)) console.error('redlock error: ' + e.message);
    });
    const resources = ['lockpick:lock:' + init.lock];
    const leaseLeft = (lock) => Math.max(0, lock.expiration - Date.now());
    const lockFailure = (e) => e instanceof ExecutionError || e instanceof ResourceLockedError;
    let held = null; // manual: the Lock; auto: { done, finished, signal }

    async function acquireAuto() {
      let granted;
      const grantedAt = new Promise((resolve) => { granted = resolve; });
      let done;
      const routineDone = new Promise((resolve) => { done = resolve; });
      const finished = redlock.using(resources, init.ttl_ms, settings, async (signal) => {
        signal.addEventListener('abort', () => {
          event('lost', { reason: signal.error ? signal.error.message : 'routine signal aborted' });
        });
        granted({ signal });
        await routineDone;
      });
      const outcome = await Promise.race([grantedAt, finished.then(() => null, (e) => ({ error: e }))]);
      if (outcome.error) {
        if (lockFailure(outcome.error)) return { type: 'fail', reason: 'timeout-waiting' };
        throw outcome.error;
      }
      held = { done, finished, signal: outcome.signal };
      // `using` hands the routine a signal, not the lock: the library claims no lease here.
      return { type: 'ok', token: null, lease_ms: null };
    }

    return {
      adapter: autoExtend ? name + '-using' : name,
      library,
      version: versionOf(library),
      events: autoExtend ? ['lost'] : undefined,
      ops: {
        async acquire() {
          if (autoExtend) return acquireAuto();
          try {
            held = await redlock.acquire(resources, init.ttl_ms);
            // owner: the value the lock SET on the masters (Lock.value), by which the server's
            // record knows this holder (docs/server-record.md).
            return { type: 'ok', token: null, lease_ms: leaseLeft(held), owner: held.value };
          } catch (e) {
            if (lockFailure(e)) return { type: 'fail', reason: 'timeout-waiting' };
            throw e;
          }
        },
        async release() {
          const lock = held;
          held = null;
          if (!lock) return { type: 'fail', reason: 'not-owner' };
          try {
            if (autoExtend) {
              lock.done();
              // `using` releases when the routine ends; an extension that failed before that
              // aborted the routine's signal: the library knew the lock was lost.
              const released = await lock.finished.then(() => null, (e) => e);
              if (lock.signal.aborted) {
                return { type: 'fail', reason: 'lost: ' + lock.signal.error.message };
              }
              if (released) throw released;
            } else {
              await lock.release();
            }
            return { type: 'ok' };
          } catch (e) {
            if (lockFailure(e)) return { type: 'fail', reason: 'not-owner' };
            throw e;
          }
        },
        ...(autoExtend ? {} : {
          async renew() {
            if (!held) return { type: 'fail', reason: 'lost' };
            try {
              held = await held.extend(init.ttl_ms);
              return { type: 'ok', lease_ms: leaseLeft(held) };
            } catch (e) {
              if (lockFailure(e)) return { type: 'fail', reason: 'lost' };
              throw e;
            }
          },
        }),
      },
    };
  });
}

module.exports = { serveRedlock5 };
