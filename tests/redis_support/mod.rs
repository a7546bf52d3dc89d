//! The Redis test harness: a server to talk to, or a loud skip.
//!
//! Tests use `REDIS_URL` when it is set; otherwise each test starts its own
//! `redis-server` on a free loopback port and stops it when done. When
//! neither works, a test fails if `TOLLGATE_REQUIRE_REDIS=1` and otherwise
//! prints that it was skipped.
#![allow(dead_code)] // each test file uses a different part of the harness

use std::io::Write as _;
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub mod cluster;

/// A Redis to run a test against; a private server stops when this drops.
pub struct TestRedis {
    url: String,
    server: Option<PrivateServer>,
}

impl TestRedis {
    /// The `redis://` URL of the server.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// A client for the server.
    pub fn client(&self) -> redis::Client {
        redis::Client::open(self.url.as_str()).expect("a valid Redis URL")
    }

    /// A plain connection, for inspecting keys.
    pub fn connection(&self) -> redis::Connection {
        self.client()
            .get_connection_with_timeout(Duration::from_secs(5))
            .expect("a connection to the test Redis")
    }

    /// Whether the test owns the server (and may flush or stop it).
    pub fn is_private(&self) -> bool {
        self.server.is_some()
    }
}

/// `REDIS_URL`'s server, else a private one, else a skip (or a failure under
/// `TOLLGATE_REQUIRE_REDIS=1`).
pub fn redis(test: &str) -> Option<TestRedis> {
    if let Ok(url) = std::env::var("REDIS_URL") {
        return match ping(&url, Duration::from_secs(5)) {
            Ok(()) => Some(TestRedis { url, server: None }),
            Err(why) => unavailable(test, &format!("REDIS_URL={url} does not answer: {why}")),
        };
    }
    let server = private_server(test)?;
    Some(TestRedis {
        url: server.url(),
        server: Some(server),
    })
}

/// A server the test alone controls (to stop, pause or flush), even when
/// `REDIS_URL` is set; a skip (or a failure) when `redis-server` cannot run.
pub fn private_server(test: &str) -> Option<PrivateServer> {
    match PrivateServer::start() {
        Ok(server) => Some(server),
        Err(why) => unavailable(test, &why),
    }
}

fn unavailable<T>(test: &str, why: &str) -> Option<T> {
    if std::env::var("TOLLGATE_REQUIRE_REDIS").as_deref() == Ok("1") {
        panic!(
            "{test}: TOLLGATE_REQUIRE_REDIS=1 but no Redis is available: {why}. \
             Install redis-server or set REDIS_URL."
        );
    }
    // Straight to the process's stderr: the test harness captures `eprintln!`
    // of passing tests, and a skip must be seen.
    let _ = writeln!(
        std::io::stderr(),
        "\n!!!!!!!! SKIPPED {test}: no Redis available ({why}). \
         Install redis-server or set REDIS_URL to run the Redis tests. !!!!!!!!\n"
    );
    None
}

/// A key prefix no other test (or test run) uses.
pub fn unique_prefix(test: &str) -> String {
    static SEQUENCE: AtomicU64 = AtomicU64::new(0);
    // Relaxed: only uniqueness of the values matters.
    let n = SEQUENCE.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("test:{test}:{}:{nanos}:{n}:", std::process::id())
}

/// Every Redis key under `prefix`.
pub fn keys_under(connection: &mut redis::Connection, prefix: &str) -> Vec<Vec<u8>> {
    redis::cmd("KEYS")
        .arg(format!("{prefix}*"))
        .query(connection)
        .expect("KEYS")
}

/// A `redis-server` child process on a loopback port.
pub struct PrivateServer {
    port: u16,
    child: Option<Child>,
}

impl PrivateServer {
    /// Starts a server on a free port and waits until it answers.
    pub fn start() -> Result<PrivateServer, String> {
        let mut last_error = String::new();
        for _ in 0..5 {
            let port = free_port()?;
            let mut server = PrivateServer { port, child: None };
            match server.launch() {
                Ok(()) => return Ok(server),
                Err(why) => last_error = why,
            }
        }
        Err(last_error)
    }

    /// The `redis://` URL of the server.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// The server's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Kills the server (its data is gone: nothing is persisted).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts an empty server again on the same port.
    pub fn restart(&mut self) {
        self.stop();
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match self.launch() {
                Ok(()) => return,
                Err(why) if Instant::now() > deadline => {
                    panic!("redis-server did not restart: {why}")
                }
                Err(_) => thread::sleep(Duration::from_millis(50)),
            }
        }
    }

    /// Freezes the server (SIGSTOP): it accepts connections but answers nothing.
    pub fn pause(&self) {
        self.signal("-STOP");
    }

    /// Lets a paused server run again (SIGCONT).
    pub fn resume(&self) {
        self.signal("-CONT");
    }

    fn signal(&self, signal: &str) {
        let pid = self.pid().expect("the server is running");
        let status = Command::new("kill")
            .args([signal, &pid.to_string()])
            .status()
            .expect("the kill command runs");
        assert!(status.success(), "kill {signal} {pid} failed");
    }

    fn launch(&mut self) -> Result<(), String> {
        let binary = std::env::var("REDIS_SERVER").unwrap_or_else(|_| "redis-server".to_owned());
        let child = Command::new(&binary)
            .args(["--port", &self.port.to_string()])
            .args(["--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(std::env::temp_dir())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|error| format!("cannot run {binary:?}: {error}"))?;
        self.child = Some(child);
        match ping(&self.url(), Duration::from_secs(5)) {
            Ok(()) => Ok(()),
            Err(why) => {
                self.stop();
                Err(format!(
                    "redis-server on port {} did not answer: {why}",
                    self.port
                ))
            }
        }
    }
}

impl Drop for PrivateServer {
    fn drop(&mut self) {
        // SIGKILL ends a paused server too.
        self.stop();
    }
}

/// A loopback port nothing listens on right now.
fn free_port() -> Result<u16, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("no free port: {e}"))?;
    listener
        .local_addr()
        .map(|address| address.port())
        .map_err(|e| format!("no free port: {e}"))
}

/// Waits until `url` answers `PING`, for at most `patience`.
fn ping(url: &str, patience: Duration) -> Result<(), String> {
    let client = redis::Client::open(url).map_err(|e| e.to_string())?;
    let deadline = Instant::now() + patience;
    loop {
        let attempt = client
            .get_connection_with_timeout(Duration::from_millis(500))
            .and_then(|mut connection| redis::cmd("PING").query::<String>(&mut connection));
        match attempt {
            Ok(_) => return Ok(()),
            Err(error) if Instant::now() > deadline => return Err(error.to_string()),
            Err(_) => thread::sleep(Duration::from_millis(20)),
        }
    }
}
