//! A minimal HTTP/1.1 client for the tests of weir's REST API: one request per connection.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// A response: its status code and body.
#[derive(Debug)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The content type, if sent.
    pub content_type: Option<String>,
    /// The body as text.
    pub body: String,
}

impl Response {
    /// The body as JSON; fails the test when it is not.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

/// Sends `method path` with `body` (JSON when given) to `address` and reads the whole response.
pub fn request(address: SocketAddr, method: &str, path: &str, body: Option<&str>) -> Response {
    request_with(address, method, path, body, &[])
}

/// [`request`] with extra `headers`.
pub fn request_with(
    address: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&str>,
    headers: &[(&str, &str)],
) -> Response {
    let mut stream = TcpStream::connect(address).unwrap_or_else(|e| panic!("connect {address}: {e}"));
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let body = body.unwrap_or("");
    let mut extra = if body.is_empty() { String::new() } else { "Content-Type: application/json\r\n".to_string() };
    for (name, value) in headers {
        extra.push_str(&format!("{name}: {value}\r\n"));
    }
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n{extra}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8_lossy(&raw).to_string();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let content_type = head
        .lines()
        .find_map(|l| l.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case("content-type")))
        .map(|(_, v)| v.trim().to_string());
    Response { status, content_type, body: body.to_string() }
}

/// `GET path`, expecting 200 and JSON.
pub fn get_json(address: SocketAddr, path: &str) -> serde_json::Value {
    let response = request(address, "GET", path, None);
    assert_eq!(response.status, 200, "GET {path}: {}", response.body);
    response.json()
}
