// lockpick adapter for the redlock npm package, v5 line (docs/client-protocol.md): the
// v5 API's adapter (redlock5.js) with this folder's pinned redlock and ioredis.
'use strict';

const Redis = require('ioredis');
const { default: Redlock, ExecutionError, ResourceLockedError } = require('redlock');
const { serveRedlock5 } = require('./redlock5.js');

serveRedlock5({
  lib: { Redlock, ExecutionError, ResourceLockedError },
  Redis,
  name: 'node-redlock-v5',
  library: 'redlock',
});
