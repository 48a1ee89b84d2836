//! The connection as hyper sees it: the head already read (see `head`) replayed first, then the
//! socket; and a write that cannot go on for the write timeout fails, so a client that stops
//! reading frees its place (hyper has no write timeout of its own).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::Sleep;

pub(super) struct Conn {
    head: Vec<u8>,
    /// How much of `head` hyper has read.
    replayed: usize,
    stream: TcpStream,
    write_timeout: Duration,
    /// Running while the socket takes no more: since the first write that had to wait.
    stalled: Option<Pin<Box<Sleep>>>,
}

impl Conn {
    pub(super) fn new(head: Vec<u8>, stream: TcpStream, write_timeout: Duration) -> Self {
        Conn {
            head,
            replayed: 0,
            stream,
            write_timeout,
            stalled: None,
        }
    }

    /// Runs a write-side operation; while it waits, the write timeout runs.
    fn watch<T>(
        &mut self,
        cx: &mut Context<'_>,
        op: impl FnOnce(Pin<&mut TcpStream>, &mut Context<'_>) -> Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>> {
        if let Poll::Ready(done) = op(Pin::new(&mut self.stream), cx) {
            self.stalled = None;
            return Poll::Ready(done);
        }
        let limit = self.write_timeout;
        let stalled = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        ready!(stalled.as_mut().poll(cx));
        Poll::Ready(Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "the client stopped reading",
        )))
    }
}

impl AsyncRead for Conn {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let rest = &this.head[this.replayed..];
        if rest.is_empty() {
            return Pin::new(&mut this.stream).poll_read(cx, buf);
        }
        let n = rest.len().min(buf.remaining());
        buf.put_slice(&rest[..n]);
        this.replayed += n;
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for Conn {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.get_mut().watch(cx, |s, cx| s.poll_write(cx, buf))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.get_mut()
            .watch(cx, |s, cx| s.poll_write_vectored(cx, bufs))
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().watch(cx, |s, cx| s.poll_flush(cx))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().watch(cx, |s, cx| s.poll_shutdown(cx))
    }
}
