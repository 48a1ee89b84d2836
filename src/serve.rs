//! `lockpick serve`: a small synchronous HTTP server on a loopback address that lists the
//! store's runs and serves their reports and raw files, read-only.

use crate::cli::ServeArgs;
use crate::exit_code;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

pub fn serve(args: ServeArgs) -> u8 {
    if !args.listen.ip().is_loopback() {
        eprintln!(
            "lockpick: failed to read --listen: {} is not a loopback address; serve only listens on 127.0.0.1 or ::1",
            args.listen
        );
        return exit_code::USAGE;
    }
    let listener = match TcpListener::bind(args.listen) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("lockpick: failed to listen on {}: {e}", args.listen);
            return exit_code::HARNESS;
        }
    };
    let addr = listener.local_addr().map_or(args.listen, |a| a);
    println!(
        "lockpick: serving {} on http://{addr}/",
        args.store.display()
    );
    let _ = std::io::stdout().flush();
    for stream in listener.incoming().flatten() {
        let store = args.store.clone();
        std::thread::spawn(move || {
            let _ = handle(stream, &store);
        });
    }
    exit_code::VALID
}

fn handle(mut stream: TcpStream, store: &Path) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request = String::new();
    reader.read_line(&mut request)?;
    // The headers are not needed; read them so the client is not cut off mid-request.
    let mut line = String::new();
    while reader.read_line(&mut line)? > 2 {
        line.clear();
    }
    let mut parts = request.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or("/"));
    if method != "GET" && method != "HEAD" {
        return respond(
            &mut stream,
            405,
            "text/plain",
            b"only GET\n",
            method == "HEAD",
        );
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
    // A run stored before reports existed gets its report made on first view.
    if !file.is_file() && file.file_name().is_some_and(|n| n == "report.html") {
        if let Some(dir) = file.parent().filter(|d| d.join("results.json").is_file()) {
            let _ = lockpick_reports::report_run_dir(dir);
        }
    }
    match std::fs::read(&file) {
        Ok(bytes) => respond(&mut stream, 200, content_type(&file), &bytes, head),
        Err(_) => respond(&mut stream, 404, "text/plain", b"not found\n", head),
    }
}

/// The file under `store` a URL path names; `None` for anything that would leave the store.
fn resolve(store: &Path, url_path: &str) -> Option<PathBuf> {
    let decoded = percent_decode(url_path)?;
    let rel = Path::new(decoded.trim_start_matches('/'));
    if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
        return None;
    }
    Some(store.join(rel))
}

fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
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

fn respond(
    stream: &mut TcpStream,
    status: u16,
    ctype: &str,
    body: &[u8],
    head: bool,
) -> std::io::Result<()> {
    let reason = match status {
        200 => "OK",
        404 => "Not Found",
        405 => "Method Not Allowed",
        _ => "Internal Server Error",
    };
    write!(
        stream,
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    if !head {
        stream.write_all(body)?;
    }
    stream.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
