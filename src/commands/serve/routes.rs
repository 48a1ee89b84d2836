//! What `serve` answers: the store's index at `/`, and any file under the store, never one
//! that resolves outside it (by `..`, encoded or not, or by a symlink: 403).

use super::body::Body;
use hyper::header::{HeaderValue, ALLOW, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// The store as served.
pub(super) struct Site {
    store: PathBuf,
    /// The store, symlinks resolved: every served file must resolve under it. A store that
    /// does not exist yet has no files to serve, and its index says so.
    root: PathBuf,
}

impl Site {
    pub(super) fn new(store: &Path) -> Self {
        Site {
            store: store.to_path_buf(),
            root: store.canonicalize().unwrap_or_else(|_| store.to_path_buf()),
        }
    }
}

/// Answers one request. hyper leaves out the body of an answer to HEAD.
pub(super) async fn answer<B>(request: Request<B>, site: Arc<Site>) -> Response<Body> {
    if request.method() != Method::GET && request.method() != Method::HEAD {
        let mut response = text(StatusCode::METHOD_NOT_ALLOWED, "only GET\n");
        response
            .headers_mut()
            .insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
        return response;
    }
    let path = request.uri().path().to_owned();
    // Rendering a page and resolving symlinks are blocking file work.
    tokio::task::spawn_blocking(move || get(&site, &path))
        .await
        .unwrap_or_else(|_| text(StatusCode::INTERNAL_SERVER_ERROR, "failed to answer\n"))
}

fn get(site: &Site, url_path: &str) -> Response<Body> {
    if url_path == "/" || url_path == "/index.html" {
        return match lockpick_reports::render_index(&site.store) {
            Ok(html) => with_type(
                StatusCode::OK,
                "text/html; charset=utf-8",
                Body::bytes(html),
            ),
            Err(e) => text(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("failed to {e}\n"),
            ),
        };
    }
    let Some(file) = resolve(&site.store, url_path) else {
        return not_found();
    };
    // A run stored before reports existed gets its report made on first view (and one
    // stored before history pages, its history page, which the report's marks link to),
    // but only in a run folder that really is in the store (never through a symlink out of it).
    let made_on_view = |n: &std::ffi::OsStr| n == "report.html" || n == "history.html";
    if !file.is_file() && file.file_name().is_some_and(made_on_view) {
        let dir = file.parent().filter(|d| d.join("results.json").is_file());
        if let Some(dir) = dir.filter(|d| matches!(place(&site.root, d), Place::Inside(_))) {
            let _ = lockpick_reports::report_run_dir(dir);
        }
    }
    match place(&site.root, &file) {
        Place::Missing => not_found(),
        Place::Outside => text(
            StatusCode::FORBIDDEN,
            "forbidden: this path leads out of the store\n",
        ),
        // The resolved path is opened, not the link: a link swapped after the check is not
        // followed.
        Place::Inside(real) => send_file(&real, content_type(&file)),
    }
}

/// Where a path resolves to, symlinks followed.
enum Place {
    Missing,
    Outside,
    /// Under the root, at this path.
    Inside(PathBuf),
}

fn place(root: &Path, path: &Path) -> Place {
    match path.canonicalize() {
        Err(_) => Place::Missing,
        Ok(real) if real.starts_with(root) => Place::Inside(real),
        Ok(_) => Place::Outside,
    }
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

fn send_file(file: &Path, ctype: &'static str) -> Response<Body> {
    match std::fs::File::open(file).and_then(|f| Ok((f.metadata()?, f))) {
        Ok((meta, f)) if meta.is_file() => {
            with_type(StatusCode::OK, ctype, Body::file(f, meta.len()))
        }
        _ => not_found(),
    }
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

fn not_found() -> Response<Body> {
    text(StatusCode::NOT_FOUND, "not found\n")
}

fn text(status: StatusCode, body: impl Into<hyper::body::Bytes>) -> Response<Body> {
    with_type(status, "text/plain", Body::bytes(body))
}

fn with_type(status: StatusCode, ctype: &'static str, body: Body) -> Response<Body> {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(ctype));
    response
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
        assert_eq!(resolve(store, "/a/..%2f..%2fx"), None);
        assert_eq!(resolve(store, "/a/%zz"), None);
        // An absolute path stays under the store.
        assert_eq!(
            resolve(store, "//etc/passwd"),
            Some(PathBuf::from("/s/etc/passwd"))
        );
        assert_eq!(
            resolve(store, "/%2fetc/passwd"),
            Some(PathBuf::from("/s/etc/passwd"))
        );
    }
}
