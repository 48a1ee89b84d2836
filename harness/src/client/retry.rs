//! The try-lock loop shared by locks that poll: try, wait a random delay, try again until the
//! deadline.

use super::lock::Outcome;
use crate::vocab::MsRange;
use rand_chacha::ChaCha8Rng;
use std::future::Future;
use std::time::Instant;

/// Calls `attempt` until it takes the lock (`Ok(Some)`), its outcome becomes unknown (`Info`,
/// returned at once: the lock may be ours), or `deadline` passes (`Fail`). `Ok(None)` (held by
/// someone else) and `Fail` (definitely not taken) are retried after a delay from `delay`.
pub(crate) async fn try_until<T, Fut>(
    deadline: Instant,
    delay: MsRange,
    rng: &mut ChaCha8Rng,
    mut attempt: impl FnMut() -> Fut,
) -> Outcome<T>
where
    Fut: Future<Output = Outcome<Option<T>>>,
{
    loop {
        let last_fail = match attempt().await {
            Outcome::Ok(Some(t)) => return Outcome::Ok(t),
            Outcome::Info(e) => return Outcome::Info(e),
            Outcome::Ok(None) => "timeout-waiting".to_owned(),
            Outcome::Fail(e) => e,
        };
        let wait = std::time::Duration::from_millis(delay.draw(rng));
        if Instant::now() + wait >= deadline {
            return Outcome::Fail(last_fail);
        }
        tokio::time::sleep(wait).await;
    }
}
