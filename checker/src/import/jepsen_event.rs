//! A Jepsen operation event as both Jepsen formats (log lines, EDN op maps) read it, before the
//! history it belongs to is known to be independent or not.

use super::edn::Edn;
use super::pair::Kind;
use crate::lin_search::OpF;

/// One client event with its value still in EDN: whether the history is independent is known
/// only once every event has been read.
pub struct JepsenEvent {
    pub process: u64,
    pub kind: Kind,
    pub f: OpF,
    pub key: Option<String>,
    pub value: Edn,
    /// The lease asked for, which lockpick's export writes beside Jepsen's usual keys.
    pub lease_ms: Option<i64>,
    /// Position in the history; orders events.
    pub pos: u64,
    pub time_ns: u64,
    pub line: usize,
}
