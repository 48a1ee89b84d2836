//! Human-readable reports of lockpick runs.
