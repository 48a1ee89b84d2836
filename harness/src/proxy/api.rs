//! The HTTP layer of the embedded server: routes Toxiproxy's API paths to the registry
//! (hyper 0.14, which reqwest 0.11 under toxiproxy_rust already pulls in), with Toxiproxy
//! 2.x's framing: 404 for an unknown path, 405 for a known path with another method, error
//! bodies `{"error": "...", "status": N}`, an `X-Toxiproxy-Request-Id` on every answer, and
//! 403 for browsers (a web page must not drive an API that listens on localhost).

use super::registry::{Answer, Registry};
use super::toxic::ApiError;
use hyper::body::HttpBody;
use hyper::{Body, Method, Request, Response, StatusCode};
use rand::Rng;
use serde_json::Value;
use std::convert::Infallible;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// The Toxiproxy release whose API this server speaks, as `GET /version` reports it.
pub const VERSION: &str = "2.12.0";

/// Request bodies past this are refused (413): the largest real one, a `/populate` of a
/// few hundred proxies, is a few tens of KB.
pub const MAX_BODY: usize = 1 << 20;

pub async fn handle(
    registry: Arc<Registry>,
    req: Request<Body>,
) -> Result<Response<Body>, Infallible> {
    let mut response = answer(&registry, req).await;
    if let Ok(id) = request_id().parse() {
        response.headers_mut().insert("X-Toxiproxy-Request-Id", id);
    }
    Ok(response)
}

async fn answer(registry: &Registry, req: Request<Body>) -> Response<Body> {
    let browser = req
        .headers()
        .get(hyper::header::USER_AGENT)
        .is_some_and(|ua| ua.as_bytes().starts_with(b"Mozilla/"));
    if browser {
        return plain(403, "User agent not allowed\n");
    }
    let method = req.method().clone();
    let Some(route) = Route::of(req.uri().path()) else {
        return plain(404, "404 page not found\n");
    };
    if !route.allows(&method) {
        return Response::builder()
            .status(StatusCode::METHOD_NOT_ALLOWED)
            .header("Allow", route.methods().join(", "))
            .body(Body::empty())
            .unwrap_or_else(|_| Response::new(Body::empty()));
    }
    let body = match read_body(req.into_body()).await {
        Ok(bytes) => bytes,
        Err(e) => return error(&e),
    };
    match route {
        // `{"version": "X"}` and a newline, byte for byte as Toxiproxy.
        Route::Version => Response::builder()
            .header("Content-Type", "application/json;charset=utf-8")
            .body(Body::from(format!("{{\"version\": \"{VERSION}\"}}\n")))
            .unwrap_or_else(|_| Response::new(Body::empty())),
        // Populate answers errors with the proxies done so far, as Toxiproxy does.
        Route::Populate => {
            let (status, answer) = match parse(&body) {
                Ok(value) => registry.populate(&value).await,
                Err(e) => (e.status, e.to_json()),
            };
            json(status, Some(answer))
        }
        route => match dispatch(registry, route, &method, &body).await {
            Ok((status, body)) => json(status, body),
            Err(e) => error(&e),
        },
    }
}

/// The API's paths; a name segment is percent-decoded.
enum Route {
    Version,
    Reset,
    Populate,
    Proxies,
    Proxy(String),
    Toxics(String),
    Toxic(String, String),
}

impl Route {
    /// The route of a path; `None` (404) for anything else, including empty segments and a
    /// trailing slash, which Toxiproxy's router does not match either.
    fn of(path: &str) -> Option<Route> {
        let rest = path.strip_prefix('/')?;
        let segments = rest
            .split('/')
            .map(crate::addr::percent_decode)
            .collect::<Option<Vec<String>>>()?;
        if segments.iter().any(String::is_empty) {
            return None;
        }
        let s: Vec<&str> = segments.iter().map(String::as_str).collect();
        Some(match s.as_slice() {
            ["version"] => Route::Version,
            ["reset"] => Route::Reset,
            ["populate"] => Route::Populate,
            ["proxies"] => Route::Proxies,
            ["proxies", p] => Route::Proxy(p.to_string()),
            ["proxies", p, "toxics"] => Route::Toxics(p.to_string()),
            ["proxies", p, "toxics", t] => Route::Toxic(p.to_string(), t.to_string()),
            _ => return None,
        })
    }

    fn methods(&self) -> &'static [&'static str] {
        match self {
            Route::Version => &["GET"],
            Route::Reset | Route::Populate => &["POST"],
            Route::Proxies | Route::Toxics(_) => &["GET", "POST"],
            Route::Proxy(_) | Route::Toxic(..) => &["GET", "POST", "PATCH", "DELETE"],
        }
    }

    fn allows(&self, method: &Method) -> bool {
        self.methods().contains(&method.as_str())
    }
}

async fn dispatch(
    registry: &Registry,
    route: Route,
    method: &Method,
    body: &[u8],
) -> Result<Answer, ApiError> {
    // Only allowed methods get here; POST and PATCH both update.
    let (get, delete) = (method == Method::GET, method == Method::DELETE);
    match route {
        Route::Version | Route::Populate => Err(ApiError::new(500, "answered before dispatch")),
        Route::Reset => registry.reset().await,
        Route::Proxies if get => Ok(registry.list().await),
        Route::Proxies => registry.create(&parse(body)?).await,
        Route::Proxy(name) if get => registry.get(&name).await,
        Route::Proxy(name) if delete => registry.delete(&name).await,
        Route::Proxy(name) => registry.update(&name, &parse(body)?).await,
        Route::Toxics(name) if get => registry.toxics(&name).await,
        Route::Toxics(name) => registry.create_toxic(&name, &parse(body)?).await,
        Route::Toxic(name, toxic) if get => registry.get_toxic(&name, &toxic).await,
        Route::Toxic(name, toxic) if delete => registry.delete_toxic(&name, &toxic).await,
        Route::Toxic(name, toxic) => registry.update_toxic(&name, &toxic, &parse(body)?).await,
    }
}

/// Reads the body, refusing one past [`MAX_BODY`] without buffering it.
async fn read_body(mut body: Body) -> Result<Vec<u8>, ApiError> {
    let mut bytes = Vec::new();
    while let Some(chunk) = body.data().await {
        let chunk = chunk.map_err(|e| ApiError::bad_request(format!("bad request body: {e}")))?;
        if bytes.len() + chunk.len() > MAX_BODY {
            return Err(ApiError::new(
                413,
                format!("bad request body: larger than {MAX_BODY} bytes"),
            ));
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

/// A JSON body; an empty one is an error, as Go's decoder reports it (`EOF`).
fn parse(body: &[u8]) -> Result<Value, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::bad_request("bad request body: EOF"));
    }
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("bad request body: {e}")))
}

/// A 20-character id in the shape of the xid Toxiproxy's request logger puts in
/// `X-Toxiproxy-Request-Id`: seconds, randomness and a counter, base32hex.
fn request_id() -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut raw = [0u8; 12];
    raw[..4].copy_from_slice(&(secs as u32).to_be_bytes());
    rand::rng().fill(&mut raw[4..9]);
    raw[9..].copy_from_slice(&COUNTER.fetch_add(1, Ordering::Relaxed).to_be_bytes()[1..]);
    const DIGITS: &[u8; 32] = b"0123456789abcdefghijklmnopqrstuv";
    let bits = raw.iter().fold(0u128, |acc, b| (acc << 8) | u128::from(*b)) << 4;
    (0..20)
        .map(|i| DIGITS[((bits >> (100 - 5 * (i + 1))) & 31) as usize] as char)
        .collect()
}

fn json(status: u16, body: Option<Value>) -> Response<Body> {
    let mut builder = Response::builder()
        .status(StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR));
    let body = match body {
        Some(value) => {
            builder = builder.header("Content-Type", "application/json");
            Body::from(value.to_string())
        }
        None => Body::empty(),
    };
    builder
        .body(body)
        .unwrap_or_else(|_| Response::new(Body::empty()))
}

/// A text answer as Go's `http.Error` writes it.
fn plain(status: u16, text: impl Into<String>) -> Response<Body> {
    Response::builder()
        .status(StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
        .header("Content-Type", "text/plain; charset=utf-8")
        .header("X-Content-Type-Options", "nosniff")
        .body(Body::from(text.into()))
        .unwrap_or_else(|_| Response::new(Body::empty()))
}

/// Toxiproxy writes its JSON errors through `http.Error`: text/plain, one line.
fn error(e: &ApiError) -> Response<Body> {
    plain(e.status, format!("{}\n", e.to_json()))
}
