//! Requests and responses as plain data.

use std::borrow::Cow;

/// A request as the shell received it.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The method, as sent (`GET`, `HEAD`, …). Methods are case-sensitive.
    pub method: &'a str,
    /// The request target: path and optional `?query`, still percent-encoded.
    pub target: &'a str,
    /// Every header line, in order, repeated names included.
    pub headers: &'a [(&'a str, &'a [u8])],
}

impl<'a> Request<'a> {
    /// All values of header `name` (case-insensitive).
    pub fn header_values(&self, name: &str) -> Vec<&'a [u8]> {
        self.headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| *v)
            .collect()
    }

    /// The path, without the query.
    pub fn path(&self) -> &'a str {
        self.target.split_once('?').map_or(self.target, |(p, _)| p)
    }

    /// The raw query string (after `?`), or `""`.
    pub fn query(&self) -> &'a str {
        self.target.split_once('?').map_or("", |(_, q)| q)
    }
}

/// A complete response. Header names are lowercase; the shell writes them in
/// this order and adds only framing (`content-length`, `date`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// Header lines in order.
    pub headers: Vec<(&'static str, String)>,
    /// The body (empty for HEAD, 204 and 304). Borrowed when it is static
    /// data (the whole built-in catalog of a variant), so a shell can send
    /// it from where it lies.
    pub body: Cow<'static, [u8]>,
}

impl Response {
    /// The first value of header `name` (lowercase), if any.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }
}
