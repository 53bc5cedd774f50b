//! Who may reach a web server and how much of it they may hold: a cap on open connections, an
//! idle timeout that closes connections nobody uses (`rest.idleness-timeout`), an optional
//! bearer token every request must carry, and the directories REST requests may write
//! savepoints into.

use std::future::Future;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::{Instant, Sleep};

/// What a server lets its clients do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    /// Connections open at once; more wait until one closes (`rest.server.max-connections`).
    pub max_connections: usize,
    /// A connection that neither sends nor receives for this long is closed
    /// (`rest.idleness-timeout`, Flink's default 5 minutes).
    pub idle_timeout: Duration,
    /// When set, every request must carry `Authorization: Bearer <token>`
    /// (`rest.authentication.token`); others are answered 401.
    pub token: Option<String>,
    /// Directories a REST request may name as a savepoint's target, besides the job's
    /// `execution.checkpointing.savepoint-dir` (`rest.savepoint.allowed-directories`).
    pub savepoint_directories: Vec<PathBuf>,
}

impl Default for Access {
    fn default() -> Self {
        Access {
            max_connections: 128,
            idle_timeout: Duration::from_secs(300),
            token: None,
            savepoint_directories: Vec::new(),
        }
    }
}

/// `path` made absolute against the working directory, with `.` and `..` resolved by name (a
/// `..` cannot climb out of an allowed directory).
pub fn normalized(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = PathBuf::new();
    for component in absolute.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Whether `target` lies in one of `allowed` (each compared after [`normalized`]).
pub fn is_within(target: &Path, allowed: &[PathBuf]) -> bool {
    let target = normalized(target);
    allowed.iter().any(|dir| target.starts_with(normalized(dir)))
}

/// Answers 401 to a request without the bearer token, when the server has one.
pub(crate) async fn require_token(State(token): State<Arc<Option<String>>>, request: Request, next: Next) -> Response {
    let Some(token) = token.as_deref() else { return next.run(request).await };
    let given = request.headers().get(header::AUTHORIZATION).and_then(|v| v.to_str().ok());
    let matches =
        given.and_then(|v| v.strip_prefix("Bearer ")).is_some_and(|t| constant_time_eq(t.as_bytes(), token.as_bytes()));
    if matches {
        return next.run(request).await;
    }
    let body = axum::Json(
        serde_json::json!({ "errors": ["Unauthorized: this server requires 'Authorization: Bearer <token>' (rest.authentication.token)."] }),
    );
    (StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, "Bearer")], body).into_response()
}

/// Compares without stopping at the first difference, so timing tells nothing of the token.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A listener that holds at most `max_connections` connections open and closes idle ones.
pub(crate) struct GuardedListener {
    inner: TcpListener,
    permits: Arc<Semaphore>,
    idle_timeout: Duration,
}

impl GuardedListener {
    pub(crate) fn new(inner: TcpListener, access: &Access) -> Self {
        GuardedListener {
            inner,
            permits: Arc::new(Semaphore::new(access.max_connections.max(1))),
            idle_timeout: access.idle_timeout,
        }
    }
}

impl axum::serve::Listener for GuardedListener {
    type Io = GuardedStream;
    type Addr = std::net::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        // Past the cap, new connections wait in the kernel's backlog until one closes.
        let Ok(permit) = Arc::clone(&self.permits).acquire_owned().await else {
            // The semaphore is never closed; wait forever rather than spin.
            return std::future::pending().await;
        };
        loop {
            match self.inner.accept().await {
                Ok((stream, address)) => {
                    let _ = stream.set_nodelay(true);
                    return (GuardedStream::new(stream, permit, self.idle_timeout), address);
                }
                // Out of descriptors or a connection reset before it was taken: wait a little
                // instead of failing the server, as axum's own listener does.
                Err(error) => {
                    tracing::debug!(%error, "accepting a web connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.inner.local_addr()
    }
}

/// A connection that gives its slot back when it closes and fails once idle too long.
pub(crate) struct GuardedStream {
    io: TcpStream,
    _permit: OwnedSemaphorePermit,
    idle_timeout: Duration,
    deadline: Pin<Box<Sleep>>,
}

impl GuardedStream {
    fn new(io: TcpStream, permit: OwnedSemaphorePermit, idle_timeout: Duration) -> Self {
        let deadline = Box::pin(tokio::time::sleep(idle_timeout));
        GuardedStream { io, _permit: permit, idle_timeout, deadline }
    }

    fn touched(&mut self) {
        let next = Instant::now() + self.idle_timeout;
        self.deadline.as_mut().reset(next);
    }

    /// A pending read or write: an error once the connection has been idle too long.
    fn idle(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.deadline.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(io::ErrorKind::TimedOut, "idle connection closed"))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl AsyncRead for GuardedStream {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let before = buf.filled().len();
        match Pin::new(&mut this.io).poll_read(cx, buf) {
            Poll::Ready(result) => {
                if buf.filled().len() > before {
                    this.touched();
                }
                Poll::Ready(result)
            }
            Poll::Pending => this.idle(cx),
        }
    }
}

impl AsyncWrite for GuardedStream {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        match Pin::new(&mut this.io).poll_write(cx, buf) {
            Poll::Ready(result) => {
                this.touched();
                Poll::Ready(result)
            }
            Poll::Pending => this.idle(cx).map(|r| r.map(|()| 0)),
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_is_within_an_allowed_directory_by_name_after_dots_are_resolved() {
        let allowed = [PathBuf::from("/srv/savepoints")];
        assert!(is_within(Path::new("/srv/savepoints/a"), &allowed));
        assert!(is_within(Path::new("/srv/savepoints"), &allowed));
        assert!(!is_within(Path::new("/srv/savepoints/../../etc/x"), &allowed));
        assert!(!is_within(Path::new("/srv/savepoints-other"), &allowed));
        assert!(!is_within(Path::new("/etc/x"), &allowed));
        assert!(!is_within(Path::new("/etc/x"), &[]));
        assert!(
            constant_time_eq(b"abc", b"abc") && !constant_time_eq(b"abc", b"abd") && !constant_time_eq(b"a", b"ab")
        );
    }
}
