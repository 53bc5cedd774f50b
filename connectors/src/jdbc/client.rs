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
    /// The URL as the user wrote it (`jdbc:postgresql://host:port/db`) with its password
    /// hidden ([`redacted`]), for messages and logs.
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
        let shown = redacted(url);
        let invalid = || crate::options::invalid("url", &shown, expected);
        let rest = url.strip_prefix("jdbc:postgresql://").ok_or_else(invalid)?;
        let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
        let (address, database) = rest.split_once('/').ok_or_else(invalid)?;
        // `user[:password]@host` and the `user` / `password` parameters, as PostgreSQL's driver
        // reads them; the table's `username` / `password` options win over both.
        let (credentials, address) = match address.rsplit_once('@') {
            Some((credentials, address)) => (Some(credentials), address),
            None => (None, address),
        };
        let (mut url_user, mut url_password) = match credentials.map(|c| c.split_once(':').unwrap_or((c, ""))) {
            Some((u, p)) => (Some(u.to_string()), (!p.is_empty()).then(|| p.to_string())),
            None => (None, None),
        };
        for (key, value) in query.split('&').filter_map(|pair| pair.split_once('=')) {
            match key {
                "user" => url_user = Some(value.to_string()),
                "password" => url_password = Some(value.to_string()),
                _ => {}
            }
        }
        let user = user.map(str::to_string).or(url_user);
        let password = password.map(str::to_string).or(url_password);
        Self::from_parts(address, database, user.as_deref(), password.as_deref(), &shown)
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

/// `url` with its password hidden (`user:***@host`, `password=***`), for messages and logs.
pub fn redacted(url: &str) -> String {
    let (head, query) = url.split_once('?').map_or((url, None), |(h, q)| (h, Some(q)));
    let head = match (head.find("://"), head.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let credentials = &head[scheme + 3..at];
            match credentials.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &head[..scheme + 3], &head[at..]),
                None => head.to_string(),
            }
        }
        _ => head.to_string(),
    };
    match query {
        None => head,
        Some(query) => {
            let pairs: Vec<String> = query
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some((key, _)) if is_secret(key) => format!("{key}=***"),
                    _ => pair.to_string(),
                })
                .collect();
            format!("{head}?{}", pairs.join("&"))
        }
    }
}

/// Whether a URL parameter holds a secret: `password`, `sslpassword` and any other key that
/// names a password, a secret or a token.
fn is_secret(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    ["password", "secret", "token"].iter().any(|word| key.contains(word))
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

/// One pooled connection with its prepared statements. Queries share it: the client pipelines
/// them over the one socket.
struct Connection {
    client: Client,
    statements: parking_lot::Mutex<HashMap<String, Statement>>,
}

type Slot = Arc<AsyncMutex<Option<Arc<Connection>>>>;

/// A pool of connections to one server, shared by the subtasks of a job. Connections open on
/// first use and are replaced after a failure. Queries go round-robin over `size` shared
/// connections; transactions take connections of their own, one transaction at a time each.
pub struct PgPool {
    endpoint: PgEndpoint,
    runtime: OnceLock<Result<IoRuntime>>,
    query_slots: Vec<Slot>,
    batch_slots: Vec<Slot>,
    next: AtomicUsize,
}

/// Rows of text values (`None` for SQL NULL).
pub type TextRows = Vec<Vec<Option<String>>>;

type Params<'a> = Vec<&'a (dyn tokio_postgres::types::ToSql + Sync)>;

fn params(values: &[Option<String>]) -> Params<'_> {
    values.iter().map(|p| p as &(dyn tokio_postgres::types::ToSql + Sync)).collect()
}

impl PgPool {
    /// A pool of up to `size` connections for queries (and as many for transactions).
    pub fn new(endpoint: PgEndpoint, size: usize) -> Arc<Self> {
        let slots = || (0..size.max(1)).map(|_| Arc::new(AsyncMutex::new(None))).collect();
        Arc::new(PgPool {
            endpoint,
            runtime: OnceLock::new(),
            query_slots: slots(),
            batch_slots: slots(),
            next: AtomicUsize::new(0),
        })
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
        self.spawn_query(sql, params)?.await.map_err(|e| Error::Validation(format!("a PostgreSQL task failed: {e}")))?
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

    /// Runs the statements in order in one transaction on a connection of its own.
    pub async fn execute_batch(self: &Arc<Self>, statements: Vec<(String, Vec<Option<String>>)>) -> Result<()> {
        let handle = self.handle()?;
        let pool = Arc::clone(self);
        let task = handle.spawn(async move {
            let slot = pool.pick(&pool.batch_slots);
            // Held for the whole transaction: nothing else runs on this connection meanwhile.
            let mut guard = slot.lock().await;
            let connection = pool.connected(&mut guard).await?;
            let result = async {
                connection.client.batch_execute("BEGIN").await?;
                for (sql, values) in &statements {
                    let statement = prepare(&connection, sql, values.len()).await?;
                    connection.client.execute(&statement, &params(values)).await?;
                }
                connection.client.batch_execute("COMMIT").await
            }
            .await;
            pool.settle(&mut guard, &connection, result)
        });
        task.await.map_err(|e| Error::Validation(format!("a PostgreSQL task failed: {e}")))?
    }

    fn pick(&self, slots: &[Slot]) -> Slot {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % slots.len();
        Arc::clone(&slots[i])
    }

    /// The slot's connection, opened now if it has none or its last one closed.
    async fn connected(&self, slot: &mut Option<Arc<Connection>>) -> Result<Arc<Connection>> {
        if let Some(connection) = slot.as_ref().filter(|c| !c.client.is_closed()) {
            return Ok(Arc::clone(connection));
        }
        let (client, connection) = self.endpoint.config.connect(NoTls).await.map_err(|e| self.failure(&e))?;
        let url = self.endpoint.url.clone();
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::warn!(url = %url, error = %e, "PostgreSQL connection closed");
            }
        });
        tracing::debug!(url = %self.endpoint.url, "PostgreSQL connection opened");
        let connection = Arc::new(Connection { client, statements: Default::default() });
        *slot = Some(Arc::clone(&connection));
        Ok(connection)
    }

    /// Drops a broken connection from its slot so that the next use reconnects.
    fn settle<T>(
        &self,
        slot: &mut Option<Arc<Connection>>,
        connection: &Arc<Connection>,
        result: std::result::Result<T, tokio_postgres::Error>,
    ) -> Result<T> {
        result.map_err(|e| {
            let broken = e.is_closed() || connection.client.is_closed() || e.code().is_none();
            if broken && slot.as_ref().is_some_and(|c| Arc::ptr_eq(c, connection)) {
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

    async fn query_here(&self, sql: &str, values: &[Option<String>]) -> Result<TextRows> {
        let slot = self.pick(&self.query_slots);
        let connection = {
            let mut guard = slot.lock().await;
            self.connected(&mut guard).await?
        };
        let result = async {
            let statement = prepare(&connection, sql, values.len()).await?;
            connection.client.query(&statement, &params(values)).await
        }
        .await;
        let rows = match result {
            Ok(rows) => rows,
            Err(e) => {
                let mut guard = slot.lock().await;
                return self.settle(&mut guard, &connection, Err(e));
            }
        };
        Ok(rows.iter().map(|row| (0..row.len()).map(|i| row.get::<_, Option<String>>(i)).collect()).collect())
    }
}

/// The statement for `sql` with `params` text parameters, prepared once per connection.
async fn prepare(
    connection: &Connection,
    sql: &str,
    params: usize,
) -> std::result::Result<Statement, tokio_postgres::Error> {
    if let Some(statement) = connection.statements.lock().get(sql) {
        return Ok(statement.clone());
    }
    let statement = connection.client.prepare_typed(sql, &vec![Type::TEXT; params]).await?;
    connection.statements.lock().insert(sql.to_string(), statement.clone());
    Ok(statement)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_show_and_url_credentials_count() {
        assert_eq!(redacted("jdbc:postgresql://bob:secret@db:5432/shop"), "jdbc:postgresql://bob:***@db:5432/shop");
        assert_eq!(
            redacted("jdbc:postgresql://db/shop?user=bob&password=secret&ssl=true"),
            "jdbc:postgresql://db/shop?user=bob&password=***&ssl=true"
        );
        assert_eq!(redacted("jdbc:postgresql://db/shop"), "jdbc:postgresql://db/shop");
        assert_eq!(
            redacted("jdbc:postgresql://db/shop?sslmode=require&sslpassword=hunter2&SSLPassword=x&sslkey=k.pk8"),
            "jdbc:postgresql://db/shop?sslmode=require&sslpassword=***&SSLPassword=***&sslkey=k.pk8"
        );
        let endpoint = PgEndpoint::from_url("jdbc:postgresql://db/shop?user=bob&password=secret", None, None).unwrap();
        assert_eq!(endpoint.config.get_user(), Some("bob"));
        assert_eq!(endpoint.config.get_password(), Some(&b"secret"[..]));
        assert!(!endpoint.url.contains("secret"), "{}", endpoint.url);
        let endpoint = PgEndpoint::from_url("jdbc:postgresql://bob:secret@db/shop", Some("alice"), None).unwrap();
        assert_eq!(endpoint.config.get_user(), Some("alice"), "the table's username wins");
        assert_eq!(endpoint.config.get_password(), Some(&b"secret"[..]));
        assert_eq!(endpoint.config.get_hosts().len(), 1);
        let error = PgEndpoint::from_url("postgres://bob:secret@db/shop", None, None).unwrap_err().to_string();
        assert!(!error.contains("secret"), "{error}");
    }
}
