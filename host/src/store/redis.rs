//! Labels on a Redis server, keys as the core names them (Spin's Redis store
//! does the same); counters by `INCRBY`, so ASCII decimal.

use super::error::{KvError, KvResult};

/// A Redis server (one connection, multiplexed, reconnecting).
pub struct RedisStore {
    url: String,
    connection: redis::aio::ConnectionManager,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

fn redis_error(e: redis::RedisError) -> KvError {
    KvError(format!("redis: {e}"))
}

const CAS_SCRIPT: &str = r"
local current = redis.call('GET', KEYS[1])
if ARGV[1] == '1' then
  if current ~= ARGV[2] then return 0 end
elseif current then
  return 0
end
redis.call('SET', KEYS[1], ARGV[3])
return 1
";

impl RedisStore {
    /// Connects to `url` (`redis://host:port[/db]`).
    pub async fn connect(url: &str) -> KvResult<RedisStore> {
        let client = redis::Client::open(url).map_err(redis_error)?;
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_number_of_retries(2)
            .set_connection_timeout(std::time::Duration::from_secs(2));
        let connection = redis::aio::ConnectionManager::new_with_config(client, config)
            .await
            .map_err(|e| KvError(format!("cannot connect to {url}: {e}")))?;
        Ok(RedisStore {
            url: url.to_owned(),
            connection,
        })
    }

    pub async fn get(&self, key: &str) -> KvResult<Option<Vec<u8>>> {
        let mut c = self.connection.clone();
        redis::cmd("GET")
            .arg(key)
            .query_async(&mut c)
            .await
            .map_err(redis_error)
    }

    pub async fn set(&self, key: &str, value: &[u8]) -> KvResult<()> {
        let mut c = self.connection.clone();
        redis::cmd("SET")
            .arg(key)
            .arg(value)
            .query_async(&mut c)
            .await
            .map_err(redis_error)
    }

    pub async fn delete(&self, key: &str) -> KvResult<()> {
        let mut c = self.connection.clone();
        redis::cmd("DEL")
            .arg(key)
            .query_async::<i64>(&mut c)
            .await
            .map_err(redis_error)?;
        Ok(())
    }

    pub async fn increment(&self, key: &str, delta: i64) -> KvResult<i64> {
        let mut c = self.connection.clone();
        redis::cmd("INCRBY")
            .arg(key)
            .arg(delta)
            .query_async(&mut c)
            .await
            .map_err(redis_error)
    }

    pub async fn keys(&self, prefix: &str) -> KvResult<Vec<String>> {
        let mut c = self.connection.clone();
        let pattern = format!("{}*", escape_glob(prefix));
        let mut cursor: u64 = 0;
        let mut keys = Vec::new();
        loop {
            let (next, batch): (u64, Vec<String>) = redis::cmd("SCAN")
                .arg(cursor)
                .arg("MATCH")
                .arg(&pattern)
                .arg("COUNT")
                .arg(1000)
                .query_async(&mut c)
                .await
                .map_err(redis_error)?;
            keys.extend(batch);
            if next == 0 {
                break;
            }
            cursor = next;
        }
        keys.sort();
        keys.dedup();
        Ok(keys)
    }

    pub async fn compare_and_swap(
        &self,
        key: &str,
        expected: Option<&[u8]>,
        new: &[u8],
    ) -> KvResult<bool> {
        let mut c = self.connection.clone();
        let written: i64 = redis::Script::new(CAS_SCRIPT)
            .key(key)
            .arg(if expected.is_some() { "1" } else { "0" })
            .arg(expected.unwrap_or_default())
            .arg(new)
            .invoke_async(&mut c)
            .await
            .map_err(redis_error)?;
        Ok(written == 1)
    }
}

fn escape_glob(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_escape() {
        assert_eq!(escape_glob("key/a*b?[c]"), "key/a\\*b\\?\\[c\\]");
    }
}
