//! Recording a nemesis act in the history around carrying it out.

use super::{NemesisCtx, NemesisError};
use lockpick_checker::history::{EventKind, Process, Value, F};

/// Records the invocation of fault verb `f`, carries it out, and records its completion: the
/// fault may be in force from the invoke on and is surely in force (or over, for a heal) by
/// the completion. A failure is recorded on the completion and returned.
pub(crate) async fn perform<Fut>(
    ctx: &NemesisCtx,
    f: F,
    value: Value,
    act: Fut,
) -> Result<(), NemesisError>
where
    Fut: std::future::Future<Output = Result<(), NemesisError>>,
{
    ctx.recorder.record(
        Process::Nemesis,
        EventKind::Invoke,
        f,
        None,
        value.clone(),
        None,
    );
    let done = act.await;
    let error = done.as_ref().err().map(|e| e.to_string());
    ctx.recorder
        .record(Process::Nemesis, EventKind::Info, f, None, value, error);
    done
}

/// A history value naming `nodes`, with an optional note.
pub(crate) fn nodes_value(nodes: &[String], note: Option<String>) -> Value {
    Value {
        nodes: nodes.to_vec(),
        note,
        ..Value::default()
    }
}
