//! `lockpick serve`: a small synchronous HTTP server on a loopback address that lists the
//! store's runs and serves their reports and raw files, read-only. It never serves a path
//! that resolves outside the store (symlinks included), reads at most [`MAX_HEAD`] bytes of
//! request line and headers within [`HEAD_TIMEOUT`], and runs at most [`MAX_CONNECTIONS`]
//! connections at once (503 past that).

use crate::cli::ServeArgs;
use crate::outcome::{Exit, Failure, Outcome};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Request line plus headers, in bytes: a longer line is answered 414, longer headers 431.
pub const MAX_HEAD: usize = 8 * 1024;
/// Time a client has to send its request line and headers (408 after).
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections served at once; one more is answered 503 and closed.
pub const MAX_CONNECTIONS: usize = 32;
/// A client that stops reading the answer for this long is dropped.
const WRITE_TIMEOUT: Duration = Duration::from_secs(30);

pub(super) fn serve(args: ServeArgs) -> Outcome {
    if !args.listen.ip().is_loopback() {
        return Err(Failure::Usage(format!(
            "read --listen: {} is not a loopback address; serve only listens on 127.0.0.1 or ::1",
            args.listen
        )));
    }
    let listener = TcpListener::bind(args.listen)
        .map_err(|e| Failure::Harness(format!("listen on {}: {e}", args.listen)))?;
    let addr = listener.local_addr().map_or(args.listen, |a| a);
    println!(
        "lockpick: serving {} on http://{addr}/",
        args.store.display()
    );
    let _ = std::io::stdout().flush();
    serve_on(listener, &args.store, Limits::default());
    Ok(Exit::Done)
}

/// How much one server takes on; tests use smaller ones.
#[derive(Debug, Clone, Copy)]
struct Limits {
    connections: usize,
    head_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            connections: MAX_CONNECTIONS,
            head_timeout: HEAD_TIMEOUT,
        }
    }
}

/// Accepts until the listener fails, one thread per connection up to `limits.connections`.
fn serve_on(listener: TcpListener, store: &Path, limits: Limits) {
    // Every served path must resolve under this; a store that does not exist yet has no
    // files to serve, and its index says so.
    let root = store.canonicalize().unwrap_or_else(|_| store.to_path_buf());
    let open = Arc::new(AtomicUsize::new(0));
    // Connections past the cap are answered 503 by one thread, in turn; if even its queue
    // is full they are closed unanswered.
    let (rejects, rejected) = std::sync::mpsc::sync_channel::<TcpStream>(64);
    std::thread::spawn(move || {
        for stream in rejected {
            reject(stream);
        }
    });
    for stream in listener.incoming().flatten() {
        if open.load(Ordering::SeqCst) >= limits.connections {
            let _ = rejects.try_send(stream);
            continue;
        }
        open.fetch_add(1, Ordering::SeqCst);
        let (store, root, done) = (store.to_path_buf(), root.clone(), Arc::clone(&open));
        let spawned = std::thread::Builder::new()
            .name("serve".into())
            .spawn(move || {
                let _ = handle(stream, &store, &root, limits.head_timeout);
                done.fetch_sub(1, Ordering::SeqCst);
            });
        if spawned.is_err() {
            open.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// Answers 503 after reading the request (briefly: one idle client must not hold up the
/// others' answers), so that the client reads the answer instead of a reset.
fn reject(mut stream: TcpStream) {
    let brief = Duration::from_millis(200);
    let _ = stream.set_write_timeout(Some(brief));
    let _ = read_head(&stream, Instant::now() + brief);
    let body = b"busy: too many connections, try again\n";
    if respond(&mut stream, 503, "text/plain", body, false).is_ok() {
        close_gently(&stream, brief);
    }
}

/// Closes our side, then reads (and drops) what the client still sends, for a moment: a
/// socket closed with unread data resets the connection, and the client may lose our answer.
fn close_gently(stream: &TcpStream, linger: Duration) {
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let mut sink = Deadline {
        stream,
        deadline: Instant::now() + linger,
    };
    let _ = std::io::copy(&mut (&mut sink).take(1 << 20), &mut std::io::sink());
}

/// Why a request head could not be read.
enum HeadError {
    LineTooLong,
    HeadersTooLarge,
    TimedOut,
    Io,
}

/// Reads the request line and skips the headers, within `MAX_HEAD` bytes and `deadline`.
fn read_head(stream: &TcpStream, deadline: Instant) -> Result<String, HeadError> {
    let mut reader = BufReader::new(Deadline { stream, deadline });
    let mut line = Vec::new();
    let mut budget = MAX_HEAD;
    let mut request = None;
    loop {
        line.clear();
        let n = (&mut reader)
            .take(budget as u64)
            .read_until(b'\n', &mut line)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => {
                    HeadError::TimedOut
                }
                _ => HeadError::Io,
            })?;
        if !line.ends_with(b"\n") {
            // Short of the budget: the client closed mid-head. At it: too long.
            return Err(match request {
                _ if n < budget => HeadError::Io,
                None => HeadError::LineTooLong,
                Some(_) => HeadError::HeadersTooLarge,
            });
        }
        budget -= n;
        match request {
            None => request = Some(String::from_utf8_lossy(&line).into_owned()),
            // The headers are not needed, only read so the client is not cut off.
            Some(_) if line == b"\r\n" || line == b"\n" => break,
            Some(_) => {}
        }
    }
    Ok(request.unwrap_or_default())
}

/// A socket whose reads all end by one deadline, so a client trickling bytes cannot keep
/// its thread past it.
struct Deadline<'a> {
    stream: &'a TcpStream,
    deadline: Instant,
}

impl Read for Deadline<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        self.stream.set_read_timeout(Some(left))?;
        (&mut &*self.stream).read(buf)
    }
}

fn handle(
    mut stream: TcpStream,
    store: &Path,
    root: &Path,
    head_timeout: Duration,
) -> std::io::Result<()> {
    stream.set_write_timeout(Some(WRITE_TIMEOUT))?;
    let request = match read_head(&stream, Instant::now() + head_timeout) {
        Ok(request) => request,
        Err(e) => {
            let (status, body): (u16, &[u8]) = match e {
                HeadError::LineTooLong => (414, b"request line longer than 8 KiB\n"),
                HeadError::HeadersTooLarge => (431, b"request headers larger than 8 KiB\n"),
                HeadError::TimedOut => (408, b"request not received in time\n"),
                HeadError::Io => return Ok(()),
            };
            respond(&mut stream, status, "text/plain", body, false)?;
            close_gently(&stream, Duration::from_secs(1));
            return Ok(());
        }
    };
    let mut parts = request.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or("/"));
    if method != "GET" && method != "HEAD" {
        return respond(&mut stream, 405, "text/plain", b"only GET\n", false);
    }
    let path = target.split(['?', '#']).next().unwrap_or("/");
    let head = method == "HEAD";
    if path == "/" || path == "/index.html" {
        return match lockpick_reports::render_index(store) {
            Ok(html) => respond(
                &mut stream,
                200,
                "text/html; charset=utf-8",
                html.as_bytes(),
                head,
            ),
            Err(e) => respond(
                &mut stream,
                500,
                "text/plain",
                format!("failed to {e}\n").as_bytes(),
                head,
            ),
        };
    }
    let Some(file) = resolve(store, path) else {
        return respond(&mut stream, 404, "text/plain", b"not found\n", head);
    };
    // A run stored before reports existed gets its report made on first view, but only
    // in a run folder that really is in the store (never through a symlink out of it).
    if !file.is_file() && file.file_name().is_some_and(|n| n == "report.html") {
        let dir = file.parent().filter(|d| d.join("results.json").is_file());
        if let Some(dir) = dir.filter(|d| within(root, d) == Some(true)) {
            let _ = lockpick_reports::report_run_dir(dir);
        }
    }
    match within(root, &file) {
        None => respond(&mut stream, 404, "text/plain", b"not found\n", head),
        Some(false) => respond(
            &mut stream,
            403,
            "text/plain",
            b"forbidden: this path leads out of the store\n",
            head,
        ),
        Some(true) => send_file(&mut stream, &file, head),
    }
}

/// Whether `path` resolves (symlinks followed) to somewhere under `root`; `None` when it
/// does not exist.
fn within(root: &Path, path: &Path) -> Option<bool> {
    let real = path.canonicalize().ok()?;
    Some(real.starts_with(root))
}

/// Streams a file: a history can be larger than the memory we want to spend on it.
fn send_file(stream: &mut TcpStream, file: &Path, head: bool) -> std::io::Result<()> {
    let opened = std::fs::File::open(file).and_then(|f| Ok((f.metadata()?, f)));
    let (meta, mut f) = match opened {
        Ok((meta, f)) if meta.is_file() => (meta, f),
        _ => return respond(stream, 404, "text/plain", b"not found\n", head),
    };
    write_head(stream, 200, content_type(file), meta.len())?;
    if !head {
        std::io::copy(&mut f, stream)?;
    }
    stream.flush()
}

/// The file under `store` a URL path names; `None` for anything that would leave the store
/// by its name (symlinks are checked when the file is opened).
fn resolve(store: &Path, url_path: &str) -> Option<PathBuf> {
    let decoded = lockpick_harness::addr::percent_decode(url_path)?;
    let rel = Path::new(decoded.trim_start_matches('/'));
    if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
        return None;
    }
    Some(store.join(rel))
}

fn content_type(p: &Path) -> &'static str {
    match p.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("json") => "application/json",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        // History, logs, scenario files: shown as text in the browser.
        _ => "text/plain; charset=utf-8",
    }
}

fn write_head(stream: &mut TcpStream, status: u16, ctype: &str, len: u64) -> std::io::Result<()> {
    let reason = match status {
        200 => "OK",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        414 => "URI Too Long",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        _ => "Internal Server Error",
    };
    write!(
        stream,
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {ctype}\r\nContent-Length: {len}\r\nConnection: close\r\n\r\n"
    )
}

fn respond(
    stream: &mut TcpStream,
    status: u16,
    ctype: &str,
    body: &[u8],
    head: bool,
) -> std::io::Result<()> {
    write_head(stream, status, ctype, body.len() as u64)?;
    if !head {
        stream.write_all(body)?;
    }
    stream.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::SocketAddr;

    #[test]
    fn paths_that_leave_the_store_are_refused() {
        let store = Path::new("/s");
        assert_eq!(
            resolve(store, "/a/b%20c/report.html"),
            Some(PathBuf::from("/s/a/b c/report.html"))
        );
        assert_eq!(resolve(store, "/../etc/passwd"), None);
        assert_eq!(resolve(store, "/a/%2e%2e/%2e%2e/x"), None);
        assert_eq!(resolve(store, "/a/%zz"), None);
    }

    /// A server on a free loopback port, on a thread that lives as long as the test binary.
    fn start(store: &Path, limits: Limits) -> SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let store = store.to_path_buf();
        std::thread::spawn(move || serve_on(listener, &store, limits));
        addr
    }

    /// Sends `request` as is and returns the whole answer (status line first).
    fn exchange(addr: SocketAddr, request: &[u8]) -> String {
        let mut stream = TcpStream::connect(addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let _ = stream.write_all(request);
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer);
        String::from_utf8_lossy(&answer).into_owned()
    }

    fn get(addr: SocketAddr, path: &str) -> String {
        exchange(
            addr,
            format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes(),
        )
    }

    #[test]
    fn symlinks_out_of_the_store_are_not_followed() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), "top secret").unwrap();
        std::fs::write(outside.path().join("results.json"), "{}").unwrap();
        let store = tempfile::tempdir().unwrap();
        let run = store.path().join("run");
        std::fs::create_dir(&run).unwrap();
        std::fs::write(run.join("history.jsonl"), "{}\n").unwrap();
        use std::os::unix::fs::symlink as link;
        link(outside.path().join("secret.txt"), run.join("passwd")).unwrap();
        link(outside.path(), store.path().join("evil")).unwrap();
        link(&run, store.path().join("latest")).unwrap();

        let addr = start(store.path(), Limits::default());
        for path in ["/run/passwd", "/evil/secret.txt", "/evil/results.json"] {
            let answer = get(addr, path);
            assert!(answer.starts_with("HTTP/1.1 403"), "{path}: {answer}");
            assert!(answer.contains("out of the store"), "{path}: {answer}");
            assert!(!answer.contains("top secret"), "{path}");
        }
        let answer = get(addr, "/evil/report.html");
        assert!(answer.starts_with("HTTP/1.1 40"), "{answer}");
        assert!(
            !outside.path().join("report.html").exists(),
            "no report written outside the store"
        );
        // Links that stay inside (a run's `latest`) still work.
        let answer = get(addr, "/latest/history.jsonl");
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(answer.ends_with("{}\n"), "{answer}");
        assert!(get(addr, "/run/missing").starts_with("HTTP/1.1 404"));
    }

    #[test]
    fn long_request_lines_and_headers_are_refused() {
        let store = tempfile::tempdir().unwrap();
        let addr = start(store.path(), Limits::default());
        // No newline ever comes: the answer must not wait for one.
        let mut line = b"GET /".to_vec();
        line.resize(MAX_HEAD + 100, b'a');
        let answer = exchange(addr, &line);
        assert!(answer.starts_with("HTTP/1.1 414"), "{answer}");

        let header = format!("X-Filler: {}\r\n", "b".repeat(200));
        let request = format!("GET / HTTP/1.1\r\n{}\r\n", header.repeat(60));
        let answer = exchange(addr, request.as_bytes());
        assert!(answer.starts_with("HTTP/1.1 431"), "{answer}");

        assert!(get(addr, "/").starts_with("HTTP/1.1 200"));
    }

    #[test]
    fn connections_are_capped_and_slow_clients_time_out() {
        let store = tempfile::tempdir().unwrap();
        let limits = Limits {
            connections: 2,
            head_timeout: Duration::from_secs(3),
        };
        let addr = start(store.path(), limits);
        // Two clients that connect and send nothing take both places.
        let idle: Vec<TcpStream> = (0..2).map(|_| TcpStream::connect(addr).unwrap()).collect();
        let answer = get(addr, "/");
        assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
        // They are cut off at the head timeout, with a 408, and free their places.
        for mut stream in idle {
            let mut answer = String::new();
            stream
                .set_read_timeout(Some(Duration::from_secs(30)))
                .unwrap();
            let _ = stream.read_to_string(&mut answer);
            assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let answer = get(addr, "/");
            if answer.starts_with("HTTP/1.1 200") {
                break;
            }
            assert!(Instant::now() < deadline, "places never freed: {answer}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
