// The same lock in Node, on lockpick's helper (a copy of clients/node/protocol.js beside it).
'use strict';
const crypto = require('crypto');
const Redis = require('ioredis');
const { serve, versionOf, hostPort } = require('./protocol.js');

serve(async (init) => {
  const redis = new Redis(hostPort(init.nodes[0]));     // the proxy in front of node n1
  const key = 'mylock:' + init.lock;
  let value = null;
  return {
    adapter: 'my-node-adapter',
    library: 'ioredis',
    version: versionOf('ioredis'),
    ops: {
      async acquire() {
        const deadline = Date.now() + init.acquire_timeout_ms;
        value = crypto.randomUUID();
        while ((await redis.set(key, value, 'PX', init.ttl_ms, 'NX')) !== 'OK') {
          if (Date.now() > deadline) return { type: 'fail', reason: 'timeout-waiting' };
          await new Promise((r) => setTimeout(r, 10));
        }
        // No token or lease (SET PX does not say); the value the server holds as `owner`.
        return { type: 'ok', token: null, lease_ms: null, owner: value };
      },
      async release() {
        const ours = await redis.eval("if redis.call('GET', KEYS[1]) == ARGV[1] then " +
          "return redis.call('DEL', KEYS[1]) end return 0", 1, key, value);
        return ours ? { type: 'ok' } : { type: 'fail', reason: 'not-owner' };
      },
    },
  };
});
