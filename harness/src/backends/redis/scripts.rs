//! The owner-checked Lua scripts of the Redis locks: the single-instance lock and Redlock give
//! a key back or extend it only while it still holds the caller's value.

/// `KEYS[1]` deleted if it holds `ARGV[1]`: 1 when deleted, 0 when not ours.
pub(super) const RELEASE: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0";

/// `KEYS[1]` given `ARGV[2]` ms more if it holds `ARGV[1]`: 1 when extended, 0 when not ours.
pub(super) const EXTEND: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0";
