//! A read buffer below TLS on the API server's connections, filled at the pace of
//! [`super::read_pacing`] ([`BufferedConnector`], [`BufferedTcp`]).
//!
//! rustls reads at most 4 KiB of TLS records per read of its transport (rustls 0.23,
//! `msgs/deframer/buffers.rs`, `READ_SIZE`), and tokio-rustls reads again until the socket is dry:
//! a pod's watch event from the API server (~9.4 KB in two TLS records, Go's records are ~4–5 KB)
//! cost about 2.5 `recvfrom` calls plus the one that finds the socket empty (BENCHMARKS.md, "CPU per
//! pod watch event"). Read through a [`READ_BUFFER_BYTES`] buffer, one `recvfrom` takes everything
//! the socket holds and rustls' 4 KiB reads are copies from it. The buffer is per connection: the
//! stepper keeps a handful of connections to the API server (one per watch), a few hundred KiB.
//! A connection that carries a stream is read in batches ([`super::read_pacing::Pacer`]): its
//! socket's `SO_RCVLOWAT` raised, and read when the timer of the batch is due.

use std::future::Future as _;
use std::io::{self, Read as _};
use std::os::fd::AsRawFd as _;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Instant;

use futures::TryFutureExt as _;
use futures::future::MapOk;
use hyper_util::client::legacy::connect::{Connected, Connection};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::Sleep;
use tower::Service;

use super::read_pacing::{BATCH_BYTES, LowWater, Pacer};

/// Bytes one read of the socket may take (64 KiB: a few watch events; the kernel's receive queue
/// on loopback and a LAN rarely holds more between two wakeups).
pub const READ_BUFFER_BYTES: usize = 64 * 1024;

/// A TCP stream read through a [`READ_BUFFER_BYTES`] buffer at a [`Pacer`]'s pace; writes go
/// straight to the socket.
#[derive(Debug)]
pub struct BufferedTcp {
    tcp: TcpStream,
    buf: Box<[u8]>,
    /// `buf[pos..filled]` is read from the socket, not yet by the reader above.
    pos: usize,
    filled: usize,
    pacer: Pacer,
    batch_due: Pin<Box<Sleep>>,
}

impl BufferedTcp {
    /// `tcp`, read from now on through a buffer of [`READ_BUFFER_BYTES`].
    pub fn new(tcp: TcpStream) -> BufferedTcp {
        BufferedTcp {
            tcp,
            buf: vec![0; READ_BUFFER_BYTES].into_boxed_slice(),
            pos: 0,
            filled: 0,
            pacer: Pacer::new(Instant::now()),
            batch_due: Box::pin(tokio::time::sleep(std::time::Duration::ZERO)),
        }
    }

    /// Bytes read from the socket and not yet handed to the reader above.
    pub fn buffered(&self) -> usize {
        self.filled - self.pos
    }

    /// Whether the connection is read in batches now ([`Pacer::deadline`]).
    pub fn batching(&self) -> bool {
        self.pacer.deadline().is_some()
    }

    /// Refills the empty buffer: at once when the socket is readable, or, while in batches, when
    /// the batch is due even if fewer than [`BATCH_BYTES`] wait. `filled` is 0 at the end of the
    /// stream.
    fn poll_fill(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            let due =
                self.pacer.deadline().is_some() && self.batch_due.as_mut().poll(cx).is_ready();
            let mut read = ReadBuf::new(&mut self.buf);
            let n = match Pin::new(&mut self.tcp).poll_read(cx, &mut read) {
                Poll::Ready(done) => done.map(|()| read.filled().len())?,
                Poll::Pending if !due => return Poll::Pending,
                // Below the low-water mark the socket reports nothing: read it anyway.
                Poll::Pending => match (&*socket2::SockRef::from(&self.tcp)).read(&mut self.buf) {
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        set_low_water(&self.tcp, self.pacer.dry())?;
                        continue;
                    }
                    Err(e) => return Poll::Ready(Err(e)),
                },
            };
            (self.pos, self.filled) = (0, n);
            if n > 0 {
                set_low_water(&self.tcp, self.pacer.read(Instant::now()))?;
                if let Some(due) = self.pacer.deadline() {
                    self.batch_due.as_mut().reset(due.into());
                }
            }
            return Poll::Ready(Ok(()));
        }
    }

    fn wrote(&mut self, written: &Poll<io::Result<usize>>) -> io::Result<()> {
        match written {
            Poll::Ready(Ok(n)) if *n > 0 => {
                set_low_water(&self.tcp, self.pacer.wrote(Instant::now()))
            }
            _ => Ok(()),
        }
    }
}

/// Sets the socket's `SO_RCVLOWAT` (socket(7)) when `change` says so. Neither socket2 0.6 nor
/// rustix 1 wraps this option.
fn set_low_water(tcp: &TcpStream, change: Option<LowWater>) -> io::Result<()> {
    let bytes: libc::c_int = match change {
        None => return Ok(()),
        Some(LowWater::Any) => 1,
        Some(LowWater::Batch) => libc::c_int::try_from(BATCH_BYTES).unwrap_or(libc::c_int::MAX),
    };
    let size = libc::socklen_t::try_from(size_of::<libc::c_int>()).unwrap_or(4);
    // SAFETY: the descriptor is `tcp`'s, open while it is borrowed; the option's value is a
    // `c_int` that outlives the call, and `size` is its size.
    let done = unsafe {
        libc::setsockopt(
            tcp.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVLOWAT,
            (&raw const bytes).cast(),
            size,
        )
    };
    if done == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

impl AsyncRead for BufferedTcp {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.pos == this.filled {
            ready!(this.poll_fill(cx))?;
        }
        let n = out.remaining().min(this.filled - this.pos);
        out.put_slice(&this.buf[this.pos..this.pos + n]);
        this.pos += n;
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for BufferedTcp {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let written = Pin::new(&mut this.tcp).poll_write(cx, buf);
        this.wrote(&written)?;
        written
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let written = Pin::new(&mut this.tcp).poll_write_vectored(cx, bufs);
        this.wrote(&written)?;
        written
    }

    fn is_write_vectored(&self) -> bool {
        self.tcp.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_shutdown(cx)
    }
}

/// What hyper learns of the connection (its addresses) is the socket's.
impl Connection for BufferedTcp {
    fn connected(&self) -> Connected {
        self.tcp.connected()
    }
}

/// A connector (hyper-util's `HttpConnector`, or any that yields a tokio `TcpStream`) whose
/// connections are read through a buffer ([`BufferedTcp`]); what TLS connector wraps it reads from
/// the buffer.
#[derive(Clone, Debug)]
pub struct BufferedConnector<C> {
    inner: C,
}

impl<C> BufferedConnector<C> {
    /// `inner`'s connections, buffered.
    pub fn new(inner: C) -> BufferedConnector<C> {
        BufferedConnector { inner }
    }
}

type Buffer = fn(TokioIo<TcpStream>) -> TokioIo<BufferedTcp>;

fn buffer(io: TokioIo<TcpStream>) -> TokioIo<BufferedTcp> {
    TokioIo::new(BufferedTcp::new(io.into_inner()))
}

impl<C> Service<http::Uri> for BufferedConnector<C>
where
    C: Service<http::Uri, Response = TokioIo<TcpStream>>,
{
    type Response = TokioIo<BufferedTcp>;
    type Error = C::Error;
    type Future = MapOk<C::Future, Buffer>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, uri: http::Uri) -> Self::Future {
        self.inner.call(uri).map_ok(buffer as Buffer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::read_pacing::STREAM_AFTER;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    use tokio::net::TcpListener;

    /// Three records' worth of bytes in the socket: a reader asking for 4 KiB (as rustls does) gets
    /// 4 KiB, and the rest is already out of the socket, in the buffer.
    #[tokio::test]
    async fn one_read_of_the_socket_takes_what_it_holds() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let sent: Vec<u8> = (0..15_000u32).map(|i| (i % 251) as u8).collect();
        let (tx, rx) = tokio::sync::oneshot::channel();
        let server = {
            let sent = sent.clone();
            tokio::spawn(async move {
                let (mut socket, _) = listener.accept().await.unwrap();
                socket.write_all(&sent).await.unwrap();
                tx.send(()).unwrap();
                let mut rest = Vec::new();
                socket.read_to_end(&mut rest).await.unwrap();
            })
        };
        let mut connector =
            BufferedConnector::new(hyper_util::client::legacy::connect::HttpConnector::new());
        let uri: http::Uri = format!("http://{addr}").parse().unwrap();
        let mut io = connector.call(uri).await.unwrap().into_inner();
        rx.await.unwrap();
        let mut first = vec![0; 4096];
        io.read_exact(&mut first).await.unwrap();
        assert_eq!(first, sent[..4096]);
        assert_eq!(io.buffered(), sent.len() - 4096);
        let mut rest = vec![0; sent.len() - 4096];
        io.read_exact(&mut rest).await.unwrap();
        assert_eq!(rest, sent[4096..]);
        io.shutdown().await.unwrap();
        server.await.unwrap();
    }

    /// A connection read for [`STREAM_AFTER`] without a write is read in batches: a byte, far
    /// below the low-water mark, is read when the batch is due; a write ends the batches.
    #[tokio::test]
    async fn a_stream_is_read_in_batches_until_written_to() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (send, mut to_send) = tokio::sync::mpsc::channel::<u8>(4);
        let server = tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            while let Some(b) = to_send.recv().await {
                socket.write_all(&[b]).await.unwrap();
            }
        });
        let mut connector =
            BufferedConnector::new(hyper_util::client::legacy::connect::HttpConnector::new());
        let mut io = connector
            .call(format!("http://{addr}").parse().unwrap())
            .await
            .unwrap()
            .into_inner();
        let read = async |io: &mut BufferedTcp| {
            let mut b = [0; 1];
            tokio::time::timeout(std::time::Duration::from_secs(5), io.read_exact(&mut b))
                .await
                .expect("not held below the low-water mark")
                .unwrap();
            b[0]
        };
        send.send(1).await.unwrap();
        assert_eq!(read(&mut io).await, 1);
        assert!(!io.batching(), "an answer, read at once");
        tokio::time::sleep(STREAM_AFTER + std::time::Duration::from_millis(100)).await;
        send.send(2).await.unwrap();
        assert_eq!(read(&mut io).await, 2);
        assert!(io.batching(), "a stream");
        send.send(3).await.unwrap();
        assert_eq!(read(&mut io).await, 3);
        assert!(io.batching());
        io.write_all(b"GET").await.unwrap();
        assert!(!io.batching(), "a request: its answer is read at once");
        send.send(4).await.unwrap();
        assert_eq!(read(&mut io).await, 4);
        assert!(!io.batching());
        drop(send);
        server.await.unwrap();
    }

    /// hyper still learns the socket's addresses through the buffer.
    #[tokio::test]
    async fn the_connection_is_the_sockets() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let mut connector =
            BufferedConnector::new(hyper_util::client::legacy::connect::HttpConnector::new());
        let io = connector
            .call(format!("http://{addr}").parse().unwrap())
            .await
            .unwrap();
        let mut extensions = http::Extensions::new();
        io.connected().get_extras(&mut extensions);
        let info = extensions
            .get::<hyper_util::client::legacy::connect::HttpInfo>()
            .expect("HttpInfo");
        assert_eq!(info.remote_addr(), addr);
    }
}
