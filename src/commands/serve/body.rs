//! Answer bodies: a short text or a page held in memory, or a file read chunk by chunk as the
//! client takes it (a history can be larger than the memory we want to spend on it).

use futures_core::Stream;
use hyper::body::{Bytes, Frame, SizeHint};
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncReadExt, Take};
use tokio_util::io::ReaderStream;

/// Bytes of a file read at a time.
const CHUNK: usize = 64 * 1024;

pub(super) enum Body {
    /// Taken when sent.
    Bytes(Option<Bytes>),
    File {
        chunks: ReaderStream<Take<tokio::fs::File>>,
        /// Bytes still to send: the length announced in the head.
        left: u64,
    },
}

impl Body {
    pub(super) fn bytes(bytes: impl Into<Bytes>) -> Self {
        Body::Bytes(Some(bytes.into()))
    }

    /// The first `len` bytes of `file`: a file that grows while it is sent (a running run's
    /// history) is cut at the length announced, one that shrinks ends the connection early.
    pub(super) fn file(file: std::fs::File, len: u64) -> Self {
        let file = tokio::fs::File::from_std(file).take(len);
        Body::File {
            chunks: ReaderStream::with_capacity(file, CHUNK),
            left: len,
        }
    }
}

impl hyper::body::Body for Body {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        match self.get_mut() {
            Body::Bytes(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            Body::File { chunks, left } => match Pin::new(chunks).poll_next(cx) {
                Poll::Ready(Some(Ok(chunk))) => {
                    *left -= chunk.len() as u64;
                    Poll::Ready(Some(Ok(Frame::data(chunk))))
                }
                Poll::Ready(None) if *left > 0 => Poll::Ready(Some(Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the file shrank while it was sent",
                )))),
                other => other.map(|chunk| chunk.map(|r| r.map(Frame::data))),
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            Body::Bytes(bytes) => bytes.as_ref().is_none_or(Bytes::is_empty),
            Body::File { left, .. } => *left == 0,
        }
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(match self {
            Body::Bytes(bytes) => bytes.as_ref().map_or(0, |b| b.len() as u64),
            Body::File { left, .. } => *left,
        })
    }
}
