//! The HTTP layer's own refusals, answered in the service's words.
//!
//! hyper refuses some requests before any of them reaches the component: bad
//! bytes in the request line or a header (400), a request target longer than
//! it reads (414), a header section too large or with too many lines (431).
//! It writes those answers itself, with an empty body and no way to change
//! them. [`ServiceRefusals`] sits between hyper and the socket and replaces
//! each such answer, whole, with the core's refusal for that status
//! ([`noise_filter_core::Rejection::of_http_layer`]): the same JSON body and
//! headers as every other refusal, `connection: close` (hyper closes the
//! connection after it), never a different status.
//!
//! hyper's own answers are recognised by their first line and headers,
//! which nothing the component answers has: `connection: close` right after
//! the status line and a zero `content-length` on a 400, 414 or 431 (every
//! core refusal starts with `content-type` and has a JSON body).

use std::io::IoSlice;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// A connection whose hyper-made 400, 414 and 431 answers are rewritten.
#[derive(Debug)]
pub struct ServiceRefusals<T> {
    inner: T,
    /// A replacement being written: its bytes, how many are sent, and how
    /// many bytes of hyper's own answer it stands for.
    replacing: Option<(Vec<u8>, usize, usize)>,
}

impl<T> ServiceRefusals<T> {
    /// Wraps a connection.
    pub fn new(inner: T) -> Self {
        ServiceRefusals {
            inner,
            replacing: None,
        }
    }
}

/// The core's answer in place of `head`, when `head` is one of hyper's own
/// refusals: its status and bytes.
fn replacement(head: &[u8]) -> Option<(u16, Vec<u8>)> {
    let rest = head.strip_prefix(b"HTTP/1.1 ")?;
    // Every write passes here: a 2xx or 3xx head (or a body chunk) is let
    // through on its first bytes.
    if rest.first() != Some(&b'4') {
        return None;
    }
    let status: u16 = std::str::from_utf8(rest.get(..3)?).ok()?.parse().ok()?;
    let rejection = noise_filter_core::Rejection::of_http_layer(status)?;
    let line_end = head.windows(2).position(|w| w == b"\r\n")?;
    let headers = &head[line_end + 2..];
    let hypers_own = headers.starts_with(b"connection: close\r\ncontent-length: 0\r\n")
        && head.ends_with(b"\r\n\r\n");
    if !hypers_own {
        return None;
    }
    let answer = rejection.response();
    let reason = hyper::StatusCode::from_u16(answer.status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("");
    let mut out = format!("HTTP/1.1 {} {reason}\r\n", answer.status);
    for (name, value) in &answer.headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str(&format!(
        "content-length: {}\r\nconnection: close\r\n\r\n",
        answer.body.len()
    ));
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(&answer.body);
    Some((answer.status, bytes))
}

impl<T: AsyncWrite + Unpin> ServiceRefusals<T> {
    /// Starts writing the core's answer instead of `head` when `head` is
    /// one of hyper's refusals (logged and counted as a request of its
    /// own, which never reached routing); `stands_for`: the bytes of
    /// hyper's answer it replaces.
    fn replace(&mut self, head: &[u8], stands_for: usize) {
        if let Some((status, bytes)) = replacement(head) {
            tracing::info!(
                target: "access",
                status,
                "refused by the HTTP layer before routing"
            );
            crate::metrics::metrics().refused_by_http_layer(status);
            self.replacing = Some((bytes, 0, stands_for));
        }
    }

    /// Writes the rest of a replacement; `Ready(n)` with the length of
    /// hyper's answer it stands for once all of it is sent.
    fn poll_replacing(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<usize>> {
        while let Some((bytes, sent, stands_for)) = &mut self.replacing {
            if *sent == bytes.len() {
                let n = *stands_for;
                self.replacing = None;
                return Poll::Ready(Ok(n));
            }
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &bytes[*sent..]))?;
            if n == 0 {
                return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()));
            }
            *sent += n;
        }
        Poll::Ready(Ok(0))
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for ServiceRefusals<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for ServiceRefusals<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        if self.replacing.is_none() {
            self.replace(buf, buf.len());
        }
        if self.replacing.is_some() {
            return self.poll_replacing(cx);
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        // hyper's own answers are a head alone, in one buffer.
        if self.replacing.is_none()
            && let Some(first) = bufs.first()
        {
            self.replace(first, first.len());
        }
        if self.replacing.is_some() {
            return self.poll_replacing(cx);
        }
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        if self.replacing.is_some() {
            ready!(self.poll_replacing(cx))?;
        }
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        if self.replacing.is_some() {
            ready!(self.poll_replacing(cx))?;
        }
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests state their expectations by unwrapping
mod tests {
    use super::*;

    const HYPER_414: &[u8] = b"HTTP/1.1 414 URI Too Long\r\nconnection: close\r\n\
        content-length: 0\r\ndate: Tue, 24 Nov 2026 23:26:41 GMT\r\n\r\n";

    #[test]
    fn hypers_own_refusals_become_the_cores() {
        for (status, head) in [
            (414, HYPER_414.to_vec()),
            (
                431,
                b"HTTP/1.1 431 Request Header Fields Too Large\r\nconnection: close\r\n\
                  content-length: 0\r\ndate: x\r\n\r\n"
                    .to_vec(),
            ),
            (
                400,
                b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\
                  date: x\r\n\r\n"
                    .to_vec(),
            ),
        ] {
            let (said, bytes) = replacement(&head).unwrap();
            assert_eq!(said, status);
            let out = String::from_utf8(bytes).unwrap();
            let rejection = noise_filter_core::Rejection::of_http_layer(status).unwrap();
            let body = String::from_utf8(rejection.body()).unwrap();
            assert!(out.starts_with(&format!("HTTP/1.1 {status} ")), "{out}");
            assert!(
                out.contains("\r\ncontent-type: application/json\r\n"),
                "{out}"
            );
            assert!(out.contains("\r\nconnection: close\r\n"), "{out}");
            assert!(out.ends_with(&format!("\r\n\r\n{body}")), "{out}");
        }
    }

    #[test]
    fn the_components_answers_pass_untouched() {
        let core_400 = b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\n\
            content-length: 10\r\n\r\n";
        assert_eq!(replacement(core_400), None);
        let ok = b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 0\r\n\r\n";
        assert_eq!(replacement(ok), None);
        // A body chunk that happens to start like a status line is not a head.
        assert_eq!(replacement(&HYPER_414[..40]), None);
    }

    #[tokio::test]
    async fn a_slow_socket_gets_the_whole_replacement() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        // A pipe of 16 bytes: every write is partial.
        let (near, mut far) = tokio::io::duplex(16);
        let writer = tokio::spawn(async move {
            let mut io = ServiceRefusals::new(near);
            let n = io.write(HYPER_414).await.unwrap();
            assert_eq!(n, HYPER_414.len(), "reported as hyper's bytes");
            io.shutdown().await.unwrap();
        });
        let mut got = Vec::new();
        far.read_to_end(&mut got).await.unwrap();
        writer.await.unwrap();
        assert_eq!(got, replacement(HYPER_414).unwrap().1);
    }
}
