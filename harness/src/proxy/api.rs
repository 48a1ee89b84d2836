//! The HTTP layer of the embedded server: routes Toxiproxy's API paths to the registry
//! (hyper 0.14, which reqwest 0.11 under toxiproxy_rust already pulls in).

use super::registry::{Answer, Registry};
use super::toxic::ApiError;
use hyper::{Body, Method, Request, Response, StatusCode};
use serde_json::{json, Value};
use std::convert::Infallible;
use std::sync::Arc;

/// The version reported by `GET /version`: the Toxiproxy API level this server speaks.
const VERSION: &str = "2.12.0-lockpick";

pub async fn handle(
    registry: Arc<Registry>,
    req: Request<Body>,
) -> Result<Response<Body>, Infallible> {
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let body = match hyper::body::to_bytes(req.into_body()).await {
        Ok(bytes) => bytes,
        Err(e) => {
            return Ok(error(&ApiError::bad_request(format!(
                "bad request body: {e}"
            ))))
        }
    };
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let answer = route(&registry, &method, &segments, &body).await;
    Ok(match answer {
        Ok((status, body)) => respond(status, body),
        Err(e) => error(&e),
    })
}

fn parse(body: &[u8]) -> Result<Value, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(json!({}));
    }
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("bad request body: {e}")))
}

async fn route(
    registry: &Registry,
    method: &Method,
    segments: &[&str],
    body: &[u8],
) -> Result<Answer, ApiError> {
    let update = method == Method::POST || method == Method::PATCH;
    match (segments, method) {
        (["version"], &Method::GET) => Ok((200, Some(json!({ "version": VERSION })))),
        (["reset"], &Method::POST) => registry.reset().await,
        (["populate"], &Method::POST) => {
            let (status, answer) = registry.populate(&parse(body)?).await;
            Ok((status, Some(answer)))
        }
        (["proxies"], &Method::GET) => Ok(registry.list().await),
        (["proxies"], &Method::POST) => registry.create(&parse(body)?).await,
        (["proxies", name], &Method::GET) => registry.get(name).await,
        (["proxies", name], _) if update => registry.update(name, &parse(body)?).await,
        (["proxies", name], &Method::DELETE) => registry.delete(name).await,
        (["proxies", name, "toxics"], &Method::GET) => registry.toxics(name).await,
        (["proxies", name, "toxics"], &Method::POST) => {
            registry.create_toxic(name, &parse(body)?).await
        }
        (["proxies", name, "toxics", toxic], &Method::GET) => registry.get_toxic(name, toxic).await,
        (["proxies", name, "toxics", toxic], _) if update => {
            registry.update_toxic(name, toxic, &parse(body)?).await
        }
        (["proxies", name, "toxics", toxic], &Method::DELETE) => {
            registry.delete_toxic(name, toxic).await
        }
        _ => Err(ApiError::new(404, "404 page not found")),
    }
}

fn respond(status: u16, body: Option<Value>) -> Response<Body> {
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

fn error(e: &ApiError) -> Response<Body> {
    respond(e.status, Some(e.to_json()))
}
