//! How the manager reaches a player: over HTTP as ggp-base's game server does
//! (one connection per message, its headers byte for byte), or in process.

use crate::player::{Player, PlayerConfig};
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Why a message got no reply.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum LinkError {
    /// No reply within the time allowed (ggp-base's `TO`).
    Timeout,
    /// The connection failed (ggp-base's `CE`), and how.
    Connection(String),
}

/// Connect timeout of ggp-base's game server.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Largest reply read from a player.
const MAX_REPLY: u64 = 1 << 20;

/// How often a cancellable send looks at its cancel flag.
const CANCEL_POLL: Duration = Duration::from_millis(20);

/// A player the manager sends messages to.
#[derive(Clone)]
pub enum Link {
    /// A player at `host:port`, over HTTP.
    Remote(String),
    /// A player in this process.
    Builtin(Arc<Player>),
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Link::Remote(address) => write!(f, "Remote({address})"),
            Link::Builtin(_) => f.write_str("Builtin"),
        }
    }
}

impl Link {
    /// A player of this process with `config`.
    pub fn builtin(config: PlayerConfig) -> Link {
        Link::Builtin(Arc::new(Player::new(config)))
    }

    /// Sends `message` and waits at most `timeout` for the reply.
    pub fn send(&self, message: &str, timeout: Duration) -> Result<String, LinkError> {
        self.send_unless(message, timeout, &AtomicBool::new(false))
    }

    /// [`Link::send`], given up (a connection error) soon after `cancel` is
    /// set: an rtGDL request may stay open a long time, and none outlives
    /// its match.
    pub fn send_unless(
        &self,
        message: &str,
        timeout: Duration,
        cancel: &AtomicBool,
    ) -> Result<String, LinkError> {
        match self {
            Link::Remote(address) => post(address, message, timeout, cancel),
            Link::Builtin(player) => {
                let (send, receive) = std::sync::mpsc::channel();
                let player = Arc::clone(player);
                let message = message.to_owned();
                let received = Instant::now();
                std::thread::spawn(move || {
                    let _ = send.send(player.handle(&message, received).text);
                });
                let deadline = received + timeout;
                loop {
                    match receive.recv_timeout(next_wait(deadline, cancel)?) {
                        Ok(text) => return Ok(text),
                        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                            return Err(LinkError::Connection("the player stopped".to_owned()))
                        }
                    }
                }
            }
        }
    }
}

/// POSTs `message` to `address` as ggp-base's game server does and reads the
/// reply body until the stated length or the end of the stream (or until
/// `cancel` is set).
fn post(address: &str, message: &str, timeout: Duration, cancel: &AtomicBool) -> Result<String, LinkError> {
    let deadline = Instant::now() + timeout;
    let connection = |e: std::io::Error| LinkError::Connection(e.to_string());
    let target = address
        .to_socket_addrs()
        .map_err(connection)?
        .next()
        .ok_or_else(|| LinkError::Connection(format!("no address for {address}")))?;
    let mut stream =
        TcpStream::connect_timeout(&target, CONNECT_TIMEOUT.min(timeout)).map_err(|e| match e.kind() {
            std::io::ErrorKind::TimedOut => LinkError::Timeout,
            _ => connection(e),
        })?;
    let host = address.rsplit_once(':').map_or(address, |(h, _)| h);
    let request = format!(
        "POST / HTTP/1.0\r\nAccept: text/delim\r\nHost: {host}\r\nSender: GAMESERVER\r\nReceiver: {address}\r\n\
         Content-Type: text/acl\r\nContent-Length: {}\r\n\r\n{message}",
        message.len()
    );
    stream.write_all(request.as_bytes()).map_err(connection)?;
    let mut received = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        stream
            .set_read_timeout(Some(next_wait(deadline, cancel)?))
            .map_err(connection)?;
        match stream.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => received.extend_from_slice(&chunk[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                continue
            }
            Err(e) => return Err(connection(e)),
        }
        if received.len() as u64 > MAX_REPLY {
            return Err(LinkError::Connection(format!(
                "a reply longer than {MAX_REPLY} bytes"
            )));
        }
        if let Some(body) = complete_body(&received) {
            return Ok(body);
        }
    }
    complete_body(&received)
        .or_else(|| body_after_head(&received))
        .ok_or_else(|| LinkError::Connection("the reply is not an HTTP response".to_owned()))
}

/// How long to wait before looking at `cancel` again: an error past the
/// deadline or once cancelled.
fn next_wait(deadline: Instant, cancel: &AtomicBool) -> Result<Duration, LinkError> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(LinkError::Timeout);
    }
    if cancel.load(Ordering::SeqCst) {
        return Err(cancelled());
    }
    Ok(left.min(CANCEL_POLL))
}

/// The error of a send given up as its match ended.
fn cancelled() -> LinkError {
    LinkError::Connection("given up at the end of the match".to_owned())
}

/// The body, once the head and as many bytes as its Content-Length are in.
fn complete_body(received: &[u8]) -> Option<String> {
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut response = httparse::Response::new(&mut headers);
    let httparse::Status::Complete(head) = response.parse(received).ok()? else {
        return None;
    };
    let length = response
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("content-length"))
        .and_then(|h| std::str::from_utf8(h.value).ok()?.trim().parse::<usize>().ok())?;
    let body = received.get(head..head + length)?;
    Some(String::from_utf8_lossy(body).trim().to_owned())
}

/// The body of a response without a Content-Length, read to the end of the stream.
fn body_after_head(received: &[u8]) -> Option<String> {
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut response = httparse::Response::new(&mut headers);
    match response.parse(received).ok()? {
        httparse::Status::Complete(head) => {
            Some(String::from_utf8_lossy(&received[head..]).trim().to_owned())
        }
        httparse::Status::Partial => None,
    }
}
