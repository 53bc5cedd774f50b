//! weir's web side, for watching and steering running jobs as Flink users do: Flink's REST API
//! (the paths and JSON of its JobManager on port 8081), a dashboard at `/` drawing each job's
//! graph with its live metrics, and `/metrics` in the Prometheus text format with the names
//! and labels of Flink's Prometheus reporter.
//!
//! The server reads a [`JobRegistry`] (the jobs, their metrics and checkpoint statistics, their
//! stop handles) and knows nothing of how jobs are planned. It runs on a thread of its own
//! with a single-threaded tokio runtime; handlers only read atomics and take short locks the
//! subtasks never hold while processing rows, so a slow or stalled HTTP client cannot slow a job.

pub mod access;
mod dashboard;
pub mod error;
pub mod prometheus;
pub mod rates;
mod rest;
mod values;

use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::oneshot;
use weir_runtime::jobs::JobRegistry;

pub use access::Access;
pub use error::{Error, Result};
use std::future::IntoFuture;

/// What a server serves: the REST API and dashboard, or only `/metrics`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Serves {
    /// Flink's REST API, the dashboard at `/` and `/metrics` (`rest.port`).
    RestAndDashboard,
    /// Only `/metrics`, as Flink's Prometheus reporter serves it (`metrics.reporter.prom.port`).
    PrometheusOnly,
}

/// A running web server; dropping it stops the server.
#[derive(Debug)]
pub struct WebServer {
    address: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl WebServer {
    /// Binds `address` (`host:port`; port 0 picks a free one) and serves `registry` on a thread
    /// of its own, to the clients `access` lets in. `option` names the setting the address came
    /// from, for the error.
    ///
    /// # Errors
    /// [`Error::Bind`] when the address cannot be bound (a port in use names the option);
    /// [`Error::Startup`] when the thread or runtime cannot start.
    pub fn start(
        registry: JobRegistry,
        address: &str,
        serves: Serves,
        option: &'static str,
        access: Access,
    ) -> Result<WebServer> {
        let bind_error = |source| Error::Bind { address: address.to_string(), option, source };
        let listener = TcpListener::bind(address).map_err(bind_error)?;
        listener.set_nonblocking(true).map_err(bind_error)?;
        let bound = listener.local_addr()?;
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let (stop, stopped) = oneshot::channel::<()>();
        let state = Arc::new(rest::Web::new(registry, access.clone()));
        let thread = std::thread::Builder::new().name("weir-web".into()).spawn(move || {
            runtime.block_on(async move {
                let listener = match tokio::net::TcpListener::from_std(listener) {
                    Ok(listener) => access::GuardedListener::new(listener, &access),
                    Err(error) => return tracing::warn!(%error, "the web server cannot listen"),
                };
                let sampler = tokio::spawn(sample_rates(Arc::clone(&state)));
                let app = match serves {
                    Serves::RestAndDashboard => rest::router(state),
                    Serves::PrometheusOnly => rest::prometheus_router(state),
                };
                let app = app
                    .layer(axum::middleware::from_fn_with_state(Arc::new(access.token.clone()), access::require_token));
                // Stopping drops every connection at once: a client that stalls holds up nothing.
                tokio::select! {
                    served = axum::serve(listener, app).into_future() => {
                        if let Err(error) = served {
                            tracing::warn!(%error, "the web server stopped");
                        }
                    }
                    _ = stopped => {}
                }
                sampler.abort();
            });
        })?;
        tracing::info!(address = %bound, ?serves, "web server started");
        Ok(WebServer { address: bound, stop: Some(stop), thread: Some(thread) })
    }

    /// The address the server listens on.
    pub fn address(&self) -> SocketAddr {
        self.address
    }
}

impl Drop for WebServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Samples the rates of every running subtask once a second.
async fn sample_rates(state: Arc<rest::Web>) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tick.tick().await;
        state.rates.sample(&state.registry);
    }
}
