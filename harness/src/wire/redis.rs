//! Redis requests with a time limit, their errors mapped to Jepsen outcomes.

use crate::vocab::Outcome;
use std::future::Future;
use std::time::Duration;

/// Runs one Redis request with a time limit and classifies what went wrong: a refused
/// connection or an error reply means the request did not take effect (`fail`); a timeout or a
/// broken connection leaves it unknown (`info`).
pub(crate) async fn request<T>(
    limit: Duration,
    fut: impl Future<Output = redis::RedisResult<T>>,
) -> Outcome<T> {
    match tokio::time::timeout(limit, fut).await {
        Err(_) => Outcome::Info("timeout".to_owned()),
        Ok(Ok(v)) => Outcome::Ok(v),
        Ok(Err(e)) => classify(&e),
    }
}

fn classify<T>(e: &redis::RedisError) -> Outcome<T> {
    if e.is_connection_refusal() {
        Outcome::Fail("connection-refused".to_owned())
    } else if e.is_timeout() {
        Outcome::Info("timeout".to_owned())
    } else if e.is_io_error() || e.is_connection_dropped() || e.is_unrecoverable_error() {
        Outcome::Info(format!("connection: {e}"))
    } else {
        Outcome::Fail(format!("error reply: {e}"))
    }
}

/// Opens a multiplexed connection with a connect time limit; timeouts of requests are ours.
pub(crate) async fn connect(
    addr: std::net::SocketAddr,
    limit: Duration,
) -> Result<redis::aio::MultiplexedConnection, String> {
    let client =
        redis::Client::open(format!("redis://{addr}/")).map_err(|e| format!("open {addr}: {e}"))?;
    let config = redis::AsyncConnectionConfig::new()
        .set_connection_timeout(Some(limit))
        .set_response_timeout(None);
    match tokio::time::timeout(
        limit,
        client.get_multiplexed_async_connection_with_config(&config),
    )
    .await
    {
        Ok(Ok(c)) => Ok(c),
        // Our timer and the client's connect timer race; either way it is the same timeout, so
        // it gets one spelling in the history.
        Ok(Err(e)) if e.is_timeout() => Err(format!("connect to {addr}: timeout")),
        Ok(Err(e)) => Err(format!("connect to {addr}: {e}")),
        Err(_) => Err(format!("connect to {addr}: timeout")),
    }
}
