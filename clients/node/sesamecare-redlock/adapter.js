// lockpick adapter for @sesamecare-oss/redlock (docs/client-protocol.md), the maintained
// TypeScript fork of node-redlock v5 with ioredis 5: the same API, so the v5 adapter
// (../redlock-v5/redlock5.js) with this folder's pinned package and ioredis.
'use strict';

const Redis = require('ioredis');
const { Redlock, ExecutionError, ResourceLockedError } = require('@sesamecare-oss/redlock');
const { serveRedlock5 } = require('../redlock-v5/redlock5.js');

serveRedlock5({
  lib: { Redlock, ExecutionError, ResourceLockedError },
  Redis,
  name: 'node-sesamecare-redlock',
  library: '@sesamecare-oss/redlock',
});
