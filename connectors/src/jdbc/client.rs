//! A small PostgreSQL client for the jdbc and hologres connectors: a pool of connections
//! served by its own I/O thread, prepared statements cached per connection, and values
//! exchanged as text so that every column type converts through one path.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::sync::Mutex as AsyncMutex;
use tokio_postgres::types::Type;
use tokio_postgres::{Client, NoTls, Statement};

use crate::error::{Error, Result};

/// Where and how to connect, with the name users know the server by (for errors).
#[derive(Clone)]
pub struct PgEndpoint {
    /// Connection settings.
    pub config: tokio_postgres::Config,
    /// The URL as the user wrote it (`jdbc:postgresql://host:port/db`), for messages.
    pub url: String,
}

impl std::fmt::Debug for PgEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgEndpoint").field("url", &self.url).finish()
    }
}

impl PgEndpoint {
    /// Reads `jdbc:postgresql://host[:port]/database[?…]`.
    ///
    /// # Errors
    /// A URL of another database or without host and database.
    pub fn from_url(url: &str, user: Option<&str>, password: Option<&str>) -> Result<Self> {
        let expected =
            "a PostgreSQL URL 'jdbc:postgresql://host:port/database' (weir's jdbc connector speaks PostgreSQL)";
        let rest =
            url.strip_prefix("jdbc:postgresql://").ok_or_else(|| crate::options::invalid("url", url, expected))?;
        let rest = rest.split('?').next().unwrap_or_default();
        let (address, database) = rest.split_once('/').ok_or_else(|| crate::options::invalid("url", url, expected))?;
        Self::from_parts(address, database, user, password, url)
    }

    /// Connects to `host[:port]` and `database`; `shown` names the server in messages.
    ///
    /// # Errors
    /// An empty host or database, or a port that is not a number.
    pub fn from_parts(
        address: &str,
        database: &str,
        user: Option<&str>,
        password: Option<&str>,
        shown: &str,
    ) -> Result<Self> {
        let (host, port) = match address.rsplit_once(':') {
            Some((h, p)) => (h, p.parse::<u16>().map_err(|_| crate::options::invalid("port", p, "a port number"))?),
            None => (address, 5432),
        };
        if host.is_empty() || database.is_empty() {
            return Err(Error::Validation(format!("'{shown}' names no host or no database")));
        }
        let mut config = tokio_postgres::Config::new();
        config.host(host).port(port).dbname(database).options("-c TimeZone=UTC");
        config.connect_timeout(Duration::from_secs(60));
        if let Some(user) = user {
            config.user(user);
        }
        if let Some(password) = password {
            config.password(password);
        }
        Ok(PgEndpoint { config, url: shown.to_string() })
    }
}

/// The I/O thread; shut down without waiting when the last user lets go (which may happen
/// on an async worker, where a blocking shutdown is not allowed).
struct IoRuntime(Option<tokio::runtime::Runtime>);

impl Drop for IoRuntime {
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}

/// One pooled connection with its prepared statements.
struct Connection {
    client: Client,
    statements: HashMap<String, Statement>,
}

/// A pool of connections to one server, shared by the subtasks of a job. Connections open on
/// first use and are replaced after a failure.
pub struct PgPool {
    endpoint: PgEndpoint,
    runtime: OnceLock<Result<IoRuntime>>,
    slots: Vec<Arc<AsyncMutex<Option<Connection>>>>,
    next: AtomicUsize,
}

/// Rows of text values (`None` for SQL NULL).
pub type TextRows = Vec<Vec<Option<String>>>;

impl PgPool {
    /// A pool of up to `size` connections.
    pub fn new(endpoint: PgEndpoint, size: usize) -> Arc<Self> {
        Arc::new(PgPool {
            endpoint,
            runtime: OnceLock::new(),
            slots: (0..size.max(1)).map(|_| Arc::new(AsyncMutex::new(None))).collect(),
            next: AtomicUsize::new(0),
        })
    }

    /// The server's URL, for messages.
    pub fn url(&self) -> &str {
        &self.endpoint.url
    }

    fn handle(&self) -> Result<tokio::runtime::Handle> {
        let runtime = self.runtime.get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .thread_name("weir-postgres")
                .enable_all()
                .build()
                .map(|r| IoRuntime(Some(r)))
                .map_err(|e| Error::Validation(format!("could not start the PostgreSQL I/O thread: {e}")))
        });
        match runtime {
            Ok(IoRuntime(Some(r))) => Ok(r.handle().clone()),
            Ok(IoRuntime(None)) => Err(Error::Validation("the PostgreSQL I/O thread is gone".into())),
            Err(e) => Err(Error::Validation(e.to_string())),
        }
    }

    /// Runs `sql` with text parameters on a pooled connection, on the pool's I/O thread, and
    /// returns the rows as text. Failures are returned as they are; retrying is the caller's
    /// business.
    pub async fn query(self: &Arc<Self>, sql: String, params: Vec<Option<String>>) -> Result<TextRows> {
        let handle = self.handle()?;
        let pool = Arc::clone(self);
        let task = handle.spawn(async move { pool.query_here(&sql, &params).await });
        task.await.map_err(|e| Error::Validation(format!("a PostgreSQL task failed: {e}")))?
    }

    /// Starts `sql` on the pool's I/O thread without waiting for it.
    ///
    /// # Errors
    /// The I/O thread could not start.
    pub fn spawn_query(
        self: &Arc<Self>,
        sql: String,
        params: Vec<Option<String>>,
    ) -> Result<tokio::task::JoinHandle<Result<TextRows>>> {
        let handle = self.handle()?;
        let pool = Arc::clone(self);
        Ok(handle.spawn(async move { pool.query_here(&sql, &params).await }))
    }

    /// Runs the statements in order in one transaction on a pooled connection.
    pub async fn execute_batch(self: &Arc<Self>, statements: Vec<(String, Vec<Option<String>>)>) -> Result<()> {
        let handle = self.handle()?;
        let pool = Arc::clone(self);
        let task = handle.spawn(async move {
            let slot = pool.slot();
            let mut guard = slot.lock().await;
            let connection = pool.connected(&mut guard).await?;
            let result = async {
                connection.client.batch_execute("BEGIN").await?;
                for (sql, params) in &statements {
                    let statement = prepare(connection, sql, params.len()).await?;
                    let refs: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> =
                        params.iter().map(|p| p as &(dyn tokio_postgres::types::ToSql + Sync)).collect();
                    connection.client.execute(&statement, &refs).await?;
                }
                connection.client.batch_execute("COMMIT").await
            }
            .await;
            pool.settle(&mut guard, result)
        });
        task.await.map_err(|e| Error::Validation(format!("a PostgreSQL task failed: {e}")))?
    }

    fn slot(&self) -> Arc<AsyncMutex<Option<Connection>>> {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.slots.len();
        Arc::clone(&self.slots[i])
    }

    async fn connected<'a>(&self, slot: &'a mut Option<Connection>) -> Result<&'a mut Connection> {
        if slot.as_ref().is_some_and(|c| c.client.is_closed()) {
            *slot = None;
        }
        if slot.is_none() {
            let (client, connection) = self.endpoint.config.connect(NoTls).await.map_err(|e| self.failure(&e))?;
            let url = self.endpoint.url.clone();
            tokio::spawn(async move {
                if let Err(e) = connection.await {
                    tracing::warn!(url = %url, error = %e, "PostgreSQL connection closed");
                }
            });
            tracing::debug!(url = %self.endpoint.url, "PostgreSQL connection opened");
            *slot = Some(Connection { client, statements: HashMap::new() });
        }
        slot.as_mut().ok_or_else(|| Error::Validation("no connection".into()))
    }

    /// Drops a broken connection so that the next use reconnects.
    fn settle<T>(
        &self,
        slot: &mut Option<Connection>,
        result: std::result::Result<T, tokio_postgres::Error>,
    ) -> Result<T> {
        result.map_err(|e| {
            if e.is_closed() || slot.as_ref().is_some_and(|c| c.client.is_closed()) || e.code().is_none() {
                *slot = None;
            }
            self.failure(&e)
        })
    }

    fn failure(&self, e: &tokio_postgres::Error) -> Error {
        let detail = match e.as_db_error() {
            Some(db) => db.message().to_string(),
            None => {
                let source = std::error::Error::source(e).map(|s| format!(": {s}")).unwrap_or_default();
                format!("{e}{source}")
            }
        };
        Error::Validation(format!("{detail} ({})", self.endpoint.url))
    }

    async fn query_here(&self, sql: &str, params: &[Option<String>]) -> Result<TextRows> {
        let slot = self.slot();
        let mut guard = slot.lock().await;
        let connection = self.connected(&mut guard).await?;
        let result = async {
            let statement = prepare(connection, sql, params.len()).await?;
            let refs: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> =
                params.iter().map(|p| p as &(dyn tokio_postgres::types::ToSql + Sync)).collect();
            connection.client.query(&statement, &refs).await
        }
        .await;
        let rows = self.settle(&mut guard, result)?;
        Ok(rows.iter().map(|row| (0..row.len()).map(|i| row.get::<_, Option<String>>(i)).collect()).collect())
    }
}

/// The statement for `sql` with `params` text parameters, prepared once per connection.
async fn prepare(
    connection: &mut Connection,
    sql: &str,
    params: usize,
) -> std::result::Result<Statement, tokio_postgres::Error> {
    if let Some(statement) = connection.statements.get(sql) {
        return Ok(statement.clone());
    }
    let statement = connection.client.prepare_typed(sql, &vec![Type::TEXT; params]).await?;
    connection.statements.insert(sql.to_string(), statement.clone());
    Ok(statement)
}
