//! What the loopback match tests share: a `ggpnet play` process, and a
//! `ggpnet match` run.

use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A `ggpnet play` process on a port the system chose, killed when dropped.
pub struct PlayerProcess {
    child: Child,
    port: u16,
}

impl PlayerProcess {
    /// Starts `ggpnet play --port 0 ARGS` and reads the port it listens on.
    pub fn start(args: &[&str]) -> PlayerProcess {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ggpnet"))
            .args(["play", "--port", "0"])
            .args(args)
            .stderr(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .expect("ggpnet play starts");
        let mut lines = BufReader::new(child.stderr.take().expect("piped")).lines();
        let first = lines.next().expect("a first line").expect("text");
        let port = first
            .rsplit(':')
            .next()
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or_else(|| panic!("no port in '{first}'"));
        // Drain the log so the player never blocks on it.
        std::thread::spawn(move || lines.for_each(drop));
        PlayerProcess { child, port }
    }

    /// Its address, `127.0.0.1:PORT`.
    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Sends raw request bytes and returns the whole response.
    pub fn raw(&self, request: &[u8]) -> String {
        let mut stream = TcpStream::connect(self.address()).expect("connects");
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .expect("timeout");
        stream.write_all(request).expect("sends");
        let mut response = String::new();
        let _ = stream.read_to_string(&mut response);
        response
    }

    /// POSTs `message` as ggp-base's game server does; the reply body.
    pub fn post(&self, message: &str) -> String {
        let request = format!(
            "POST / HTTP/1.0\r\nAccept: text/delim\r\nHost: localhost\r\nSender: GAMESERVER\r\n\
             Receiver: {}\r\nContent-Type: text/acl\r\nContent-Length: {}\r\n\r\n{message}",
            self.address(),
            message.len()
        );
        let response = self.raw(request.as_bytes());
        response
            .split_once("\r\n\r\n")
            .map_or(String::new(), |(_, body)| body.to_owned())
    }
}

impl Drop for PlayerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `ggpnet match GAME ARGS --json JSON`, which must succeed; the JSON
/// it wrote (records and results).
pub fn match_json(game: &Path, args: &[&str], json: &Path) -> Value {
    let output = Command::new(env!("CARGO_BIN_EXE_ggpnet"))
        .arg("match")
        .arg(game)
        .args(args)
        .arg("--json")
        .arg(json)
        .output()
        .expect("ggpnet match runs");
    assert!(
        output.status.success(),
        "{game:?} {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(json).expect("the record")).expect("JSON")
}
