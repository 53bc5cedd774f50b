//! The dashboard at `/`: static files compiled into the binary (no build step), which read the
//! REST API from the browser and redraw every second.

use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;

const INDEX: &str = include_str!("dashboard/index.html");
const SCRIPT: &str = include_str!("dashboard/app.js");
const STYLE: &str = include_str!("dashboard/style.css");

fn file(content_type: &'static str, body: &'static str) -> impl IntoResponse {
    ([(CONTENT_TYPE, content_type), (CACHE_CONTROL, "no-cache")], body)
}

/// `/`, `/app.js` and `/style.css`.
pub(crate) fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/", get(|| async { file("text/html; charset=utf-8", INDEX) }))
        .route("/app.js", get(|| async { file("text/javascript; charset=utf-8", SCRIPT) }))
        .route("/style.css", get(|| async { file("text/css; charset=utf-8", STYLE) }))
}
