//! `ggpnet play`: the player of `ggpnet::player` served over HTTP as game
//! managers speak it (`shared/PROTOCOL.md`): one request per connection, the
//! message in a POST body or in the path of a GET, `OPTIONS` answered empty,
//! the reply with the headers ggp-base's player sends, then the connection
//! closed. Headers are parsed by `httparse`; the body is read to its stated
//! length or to the end of the stream, whichever comes first (ggp-base states
//! the length in UTF-16 units).
//!
//! Every connection is bounded: its header size, its body (`--max-input`), the
//! time to read it, and the number of connections served at once. A message
//! that is not UTF-8 is refused (`400`, reply `error`), as a game file is. An rtGDL
//! PLAY may keep its connection's thread a long time (the player holds it
//! until its role has a legal move): it is freed by a newer PLAY of the
//! match, the match's end, or the player's idle timeout, and the manager
//! keeps few requests open per player (`docs/LANGUAGES.md`, "Match play").

use super::{Failure, PlayArgs};
use ggpnet::player::{Player, PlayerConfig, Reply};
use ggpnet_tools::report;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Largest request head (request line and headers).
const MAX_HEAD: usize = 64 << 10;

/// Time allowed to read a whole request.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Connections served at once; more are answered 503 and closed.
const MAX_CONNECTIONS: usize = 256;

/// A request as read: its method and the message it carries.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Request {
    pub method: String,
    pub message: String,
}

/// Serves `player` on `listener`, each connection on its own thread.
pub(crate) fn serve(listener: TcpListener, player: Arc<Player>, log: Arc<Log>, max_body: u64) {
    let active = Arc::new(AtomicUsize::new(0));
    for stream in listener.incoming() {
        // Clocks count from here, not from when a thread gets to the request.
        let received = Instant::now();
        let Ok(mut stream) = stream else {
            continue;
        };
        if active.load(Ordering::SeqCst) >= MAX_CONNECTIONS {
            let _ = stream.write_all(&response("503 Service Unavailable", "busy"));
            continue;
        }
        active.fetch_add(1, Ordering::SeqCst);
        let (player, log, done) = (Arc::clone(&player), Arc::clone(&log), Arc::clone(&active));
        let spawned = std::thread::Builder::new().spawn(move || {
            serve_one(stream, received, &player, &log, max_body);
            done.fetch_sub(1, Ordering::SeqCst);
        });
        if spawned.is_err() {
            active.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// Reads one request received at `received`, answers it, and closes the connection.
fn serve_one(mut stream: TcpStream, received: Instant, player: &Player, log: &Log, max_body: u64) {
    let peer = stream.peer_addr().map_or("?".to_owned(), |a| a.to_string());
    let _ = stream.set_read_timeout(Some(READ_TIMEOUT));
    let (status, reply) = match read_request(&mut stream, max_body) {
        Ok(request) if request.method == "OPTIONS" => ("200 OK", reply("", "options".to_owned())),
        Ok(request) => ("200 OK", player.handle(&request.message, received)),
        Err(e) => ("400 Bad Request", reply("error", e)),
    };
    let _ = stream.write_all(&response(status, &reply.text));
    let _ = stream.flush();
    let _ = stream.shutdown(std::net::Shutdown::Both);
    log.line(&peer, &reply, received.elapsed());
}

/// Reads a request's head and body from `stream`.
pub(crate) fn read_request(stream: &mut impl Read, max_body: u64) -> Result<Request, String> {
    let mut buffer = Vec::with_capacity(4096);
    let head_end = loop {
        if let Some(end) = find_head_end(&buffer) {
            break end;
        }
        if buffer.len() > MAX_HEAD {
            return Err(format!("request head longer than {MAX_HEAD} bytes"));
        }
        let mut chunk = [0u8; 4096];
        let n = stream
            .read(&mut chunk)
            .map_err(|e| format!("reading the request: {e}"))?;
        if n == 0 {
            return Err("the connection closed before the request head ended".to_owned());
        }
        buffer.extend_from_slice(&chunk[..n]);
    };
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut request = httparse::Request::new(&mut headers);
    request
        .parse(&buffer[..head_end])
        .map_err(|e| format!("malformed request head: {e}"))?;
    let method = request.method.unwrap_or("").to_ascii_uppercase();
    let path = request.path.unwrap_or("/").to_owned();
    let length = content_length(request.headers)?;
    let mut body = buffer[head_end..].to_vec();
    match method.as_str() {
        "POST" => {
            let wanted = length.unwrap_or(0);
            if wanted > max_body {
                return Err(format!(
                    "a body of {wanted} bytes is over the limit of {max_body}"
                ));
            }
            read_body(stream, &mut body, wanted as usize)?;
            Ok(Request {
                method,
                message: message_text(body)?,
            })
        }
        "GET" => {
            let encoded = path.trim_start_matches('/');
            let decoded = percent_encoding::percent_decode_str(encoded).collect();
            Ok(Request {
                method,
                message: message_text(decoded)?,
            })
        }
        "OPTIONS" => Ok(Request {
            method,
            message: String::new(),
        }),
        other => Err(format!("method {other} is not served")),
    }
}

/// The message of a request, trimmed; refused, as a game file would be, when
/// it is not UTF-8.
fn message_text(bytes: Vec<u8>) -> Result<String, String> {
    let text = super::input::utf8_text(bytes).map_err(|reason| format!("the message is {reason}"))?;
    Ok(text.trim().to_owned())
}

/// The end of the request head (after its blank line), if it is all in `buffer`.
fn find_head_end(buffer: &[u8]) -> Option<usize> {
    buffer.windows(4).position(|w| w == b"\r\n\r\n").map(|p| p + 4)
}

/// The value of a `Content-Length` header, any case.
fn content_length(headers: &[httparse::Header<'_>]) -> Result<Option<u64>, String> {
    let Some(header) = headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("content-length"))
    else {
        return Ok(None);
    };
    let text = std::str::from_utf8(header.value).unwrap_or("").trim();
    text.parse()
        .map(Some)
        .map_err(|_| format!("Content-Length '{text}' is not a number"))
}

/// Reads until `body` holds `wanted` bytes or the stream ends.
fn read_body(stream: &mut impl Read, body: &mut Vec<u8>, wanted: usize) -> Result<(), String> {
    let mut chunk = [0u8; 8192];
    while body.len() < wanted {
        let n = match stream.read(&mut chunk) {
            Ok(n) => n,
            Err(e) if body.is_empty() => return Err(format!("reading the body: {e}")),
            Err(_) => 0,
        };
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    body.truncate(wanted);
    Ok(())
}

/// A response with the headers ggp-base's player sends.
fn response(status: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.0 {status}\r\nContent-type: text/acl\r\nContent-length: {}\r\n\
         Access-Control-Allow-Origin: *\r\nAccess-Control-Allow-Methods: POST, GET, OPTIONS\r\n\
         Access-Control-Allow-Headers: Content-Type\r\nAccess-Control-Allow-Age: 86400\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// A reply with its log note.
fn reply(text: &str, note: String) -> Reply {
    Reply {
        text: text.to_owned(),
        note,
    }
}

/// One line per request on standard error, and optionally one JSON object per
/// request in a file.
pub(crate) struct Log {
    json: Option<Mutex<std::fs::File>>,
}

impl Log {
    fn line(&self, peer: &str, reply: &Reply, took: Duration) {
        let ms = took.as_secs_f64() * 1e3;
        eprintln!("{peer} {ms:.0} ms: {} -> {}", reply.note, reply.text);
        if let Some(file) = &self.json {
            let record = report::RequestLog {
                peer,
                ms,
                note: &reply.note,
                reply: &reply.text,
            };
            if let Ok(mut file) = file.lock() {
                let _ = writeln!(file, "{}", report::to_json(&record));
            }
        }
    }
}

/// Runs `ggpnet play`.
pub(crate) fn run(args: &PlayArgs) -> Result<bool, Failure> {
    let listener = TcpListener::bind((args.bind.as_str(), args.port))
        .map_err(|e| Failure::of(&e).at(&format!("cannot listen on {}:{}", args.bind, args.port)))?;
    let json = match &args.json_log {
        Some(path) => {
            Some(Mutex::new(std::fs::File::create(path).map_err(|e| {
                Failure::of(&e).at(&format!("cannot write {}", path.display()))
            })?))
        }
        None => None,
    };
    let threads = args.threads.unwrap_or_else(|| {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        cores.min(ggpnet::MAX_THREADS)
    });
    let config = PlayerConfig::new()
        .search(args.search)
        .leaves(args.leaves)
        .threads(threads)
        .expect("clap checks --threads, and the cores are capped")
        .margin(Duration::from_secs_f64(args.margin))
        .game(super::game_config());
    eprintln!(
        "ggpnet player ({}, {threads} threads) listening on {}",
        args.search.name(),
        listener.local_addr().map_or("?".to_owned(), |a| a.to_string())
    );
    let max_body = super::max_input_bytes();
    serve(
        listener,
        Arc::new(Player::new(config)),
        Arc::new(Log { json }),
        max_body,
    );
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(bytes: &[u8]) -> Result<Request, String> {
        read_request(&mut &bytes[..], 1 << 20)
    }

    #[test]
    fn reads_the_bytes_of_ggp_base() {
        let captured = b"POST / HTTP/1.0\r\nAccept: text/delim\r\nHost: localhost\r\nSender: GAMESERVER\r\n\
Receiver: 127.0.0.1:9152\r\nContent-Type: text/acl\r\nContent-Length: 18\r\n\r\n( PLAY cap.1 NIL )";
        assert_eq!(
            read(captured),
            Ok(Request {
                method: "POST".into(),
                message: "( PLAY cap.1 NIL )".into()
            })
        );
    }

    #[test]
    fn reads_the_get_form_options_and_short_lengths() {
        let get = read(b"GET /(%20INFO%20) HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        assert_eq!(get.message, "( INFO )");
        assert_eq!(read(b"OPTIONS / HTTP/1.1\r\n\r\n").unwrap().method, "OPTIONS");
        // A stated length past the end of the stream: what came is read.
        let short = read(b"POST / HTTP/1.0\r\nContent-Length: 100\r\n\r\n( INFO )").unwrap();
        assert_eq!(short.message, "( INFO )");
        // The Dresden GameController's header case.
        let dresden = read(b"POST / HTTP/1.0\r\nContent-length: 8\r\n\r\n( INFO )").unwrap();
        assert_eq!(dresden.message, "( INFO )");
    }

    #[test]
    fn refuses_what_is_not_a_request() {
        for (bytes, error) in [
            (&b"\x00\x01garbage\r\n\r\n"[..], "malformed"),
            (
                b"POST / HTTP/1.0\r\nContent-Length: 99999999999\r\n\r\n",
                "over the limit",
            ),
            (b"POST / HTTP/1.0\r\nContent-Length: x\r\n\r\n", "not a number"),
            (b"POST / HTTP/1.0\r\n", "closed before"),
            (b"DELETE / HTTP/1.0\r\n\r\n", "not served"),
            (
                b"POST / HTTP/1.0\r\nContent-Length: 12\r\n\r\n( INFO \xff\xfe )",
                "the message is not UTF-8 text (invalid byte at offset 7)",
            ),
            (
                b"GET /(%20INFO%FF) HTTP/1.1\r\n\r\n",
                "the message is not UTF-8 text (invalid byte at offset 6)",
            ),
        ] {
            let e = read(bytes).unwrap_err();
            assert!(e.contains(error), "{e}");
        }
        let huge = vec![b'a'; MAX_HEAD + 10];
        assert!(read(&huge).unwrap_err().contains("head longer"));
    }
}
