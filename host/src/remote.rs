//! `--remote URL`: the admin CLI against a deployment's admin API
//! (`/admin/v1/`, served by the component itself) instead of a store it
//! reaches. The token is the environment's `NOISE_FILTER_ADMIN_TOKEN`, never
//! a flag; answers are the API's JSON, read into the same values a local
//! store gives, so every command prints the same either way.

use std::time::Duration;

use anyhow::{Context as _, anyhow, bail};

/// How long one call may take, connection included.
const TIMEOUT: Duration = Duration::from_secs(30);
/// The largest answer read (an account's export is the largest).
const MAX_ANSWER: u64 = 64 * 1024 * 1024;

/// A deployment's admin API.
pub struct Remote {
    base: String,
    token: String,
    agent: ureq::Agent,
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remote")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl Remote {
    /// The API of the deployment at `url` (`https://host[:port][/base]`;
    /// `http://` only to this machine: a token must not cross a network in
    /// clear), with `token`.
    pub fn new(url: &str, token: &str) -> anyhow::Result<Remote> {
        let base = url.trim_end_matches('/').to_owned();
        let (scheme, rest) = base
            .split_once("://")
            .ok_or_else(|| anyhow!("--remote {url:?} is not a URL: give https://host[:port]"))?;
        let host = rest.split(['/', ':']).next().unwrap_or_default();
        match scheme {
            "https" => {}
            "http" if matches!(host, "localhost" | "127.0.0.1" | "[::1]") => {}
            "http" => bail!(
                "--remote {url}: use https:// (over http:// the admin token would cross the \
                 network in clear); http:// is accepted for this machine only"
            ),
            _ => bail!("--remote {url:?}: give an https:// URL"),
        }
        let token = token.trim();
        if token.is_empty() || token.contains([',', ' ', '\t', '\n']) {
            bail!(
                "NOISE_FILTER_ADMIN_TOKEN must hold the one admin token to present (the \
                 deployment's, or one of them)"
            );
        }
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(TIMEOUT))
            .build()
            .into();
        Ok(Remote {
            base,
            token: token.to_owned(),
            agent,
        })
    }

    /// The deployment, as the CLI names the store it wrote to.
    pub fn describe(&self) -> String {
        format!("admin API {}", self.base)
    }

    /// `GET` an API path (under `/admin/v1/`); the answer's JSON.
    pub fn get(&self, path: &str) -> anyhow::Result<Vec<u8>> {
        self.call("GET", path, None)
    }

    /// `POST` `body` to an API path; the answer's JSON.
    pub fn post(&self, path: &str, body: Vec<u8>) -> anyhow::Result<Vec<u8>> {
        self.call("POST", path, Some(body))
    }

    /// `DELETE` an API path; the answer's JSON.
    pub fn delete(&self, path: &str) -> anyhow::Result<Vec<u8>> {
        self.call("DELETE", path, None)
    }

    fn call(&self, method: &str, path: &str, body: Option<Vec<u8>>) -> anyhow::Result<Vec<u8>> {
        let url = format!("{}/admin/v1/{path}", self.base);
        let auth = format!("Bearer {}", self.token);
        let sent = match (method, body) {
            ("POST", body) => self
                .agent
                .post(&url)
                .header("authorization", &auth)
                .header("content-type", "application/json")
                .send(body.unwrap_or_default()),
            ("DELETE", _) => self
                .agent
                .delete(&url)
                .header("authorization", &auth)
                .call(),
            _ => self.agent.get(&url).header("authorization", &auth).call(),
        };
        // The URL, never the token, in what an error says.
        let mut answer = sent.with_context(|| format!("{method} {url}"))?;
        let status = answer.status().as_u16();
        let bytes = answer
            .body_mut()
            .with_config()
            .limit(MAX_ANSWER)
            .read_to_vec()
            .with_context(|| format!("{method} {url}: reading the answer"))?;
        if (200..300).contains(&status) {
            return Ok(bytes);
        }
        // The API's refusal, in the core's words, as a local store gives it.
        let error = serde_json::from_slice::<serde_json::Value>(&bytes)
            .ok()
            .and_then(|v| v["error"].as_str().map(str::to_owned));
        match (status, error) {
            (404, Some(text)) if text == "Not found" => bail!(
                "{url} answered 404: no admin API there (is an admin token configured on the \
                 deployment?)"
            ),
            (_, Some(text)) => bail!("{text}"),
            (_, None) => bail!("{method} {url} answered {status}"),
        }
    }
}

/// `text` as one segment of a path: every byte but unreserved ones
/// (RFC 3986) as `%XX`.
pub fn segment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests state their expectations by unwrapping
mod tests {
    use super::*;

    #[test]
    fn a_token_goes_over_tls_or_stays_on_this_machine() {
        let token = "t".repeat(40);
        assert!(Remote::new("https://nf.example.com/", &token).is_ok());
        assert!(Remote::new("http://127.0.0.1:8080", &token).is_ok());
        assert!(Remote::new("http://localhost", &token).is_ok());
        let refused = Remote::new("http://nf.example.com", &token).unwrap_err();
        assert!(refused.to_string().contains("https://"), "{refused}");
        assert!(Remote::new("nf.example.com", &token).is_err());
        assert!(Remote::new("https://x", "").is_err());
        assert!(Remote::new("https://x", "a,b").is_err());
        let remote = Remote::new("https://nf.example.com/", &token).unwrap();
        assert!(!format!("{remote:?}").contains(&token));
        assert_eq!(remote.describe(), "admin API https://nf.example.com");
    }

    #[test]
    fn segments_are_encoded() {
        assert_eq!(segment("custom-a.b_c~d"), "custom-a.b_c~d");
        assert_eq!(segment("a/b?c d"), "a%2Fb%3Fc%20d");
    }
}
