//! What a side leaves on disk, as types: the events it appends to `events.jsonl`
//! ([`Event`], written through an [`EventLog`]) and the `session.json` status record
//! ([`SessionRecord`]). One home for every event name and status string, shared by the
//! engine, the transport's heartbeat, the session layer, the daemon and `session list|events`.
//! The on-disk shapes are the reference client's, so its `session` commands read our files.

mod clock;
mod decision;
mod event;
mod event_log;
mod session_record;
mod table_choice;
mod table_pick;
pub mod write_behind;

pub use clock::iso_now;
pub use decision::{
    Choices, DecisionFiles, DecisionMeta, DecisionOutcome, DecisionRecord, DecisionStatus,
    MATCH_KEYS, TimeoutAction, Window, WindowMode, WindowOutcome, plain_text, read_lines,
    window_key,
};
pub use event::{
    Event, MessageDirection, PathKind, ReceiptSource, RecordedEvent, find_event, kept_frame,
    read_events,
};
pub use event_log::EventLog;
pub use session_record::{SessionRecord, SessionStatus};
pub use table_choice::{
    AmountRange, Free, MAX_CHOICES, TableChoice, find_action as find_table_action,
    resolve as resolve_table_choice,
};
