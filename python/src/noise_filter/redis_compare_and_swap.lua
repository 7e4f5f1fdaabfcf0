-- Compare-and-swap of one Redis key, for the admin changes (a key's record,
-- an account's patterns): writes ARGV[3] to KEYS[1] if the value there is
-- still ARGV[2] (ARGV[1] = '1'), or if there is none (ARGV[1] = '0').
-- Returns 1 when it wrote, 0 when another writer got there first.
-- One file for both stores that keep the Redis layout: the Rust host
-- includes it (host/src/store/redis.rs), the Python package ships it
-- (noise_filter.RedisStore), so both swap alike.
local current = redis.call('GET', KEYS[1])
if ARGV[1] == '1' then
  if current ~= ARGV[2] then return 0 end
elseif current then
  return 0
end
redis.call('SET', KEYS[1], ARGV[3])
return 1
