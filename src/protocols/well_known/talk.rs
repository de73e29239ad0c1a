//! A contract's text action: what makes a room conversational. The room contracts on the
//! network declare their actions only in prose, so which one carries what a member says
//! (Community Room's `{"kind": "send", "text"}`) is a column of the well-known table.

use serde::Serialize;
use serde_json::{Value, json};

/// A room's text action: `{"kind": kind, field: text}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Talk {
    /// The action's `kind`.
    pub kind: &'static str,
    /// The field the text travels in.
    pub field: &'static str,
    /// The most UTF-8 bytes the contract takes there (after trimming).
    pub max_bytes: usize,
}

impl Talk {
    /// The text action of the contract `protocol_id`, when it is conversational.
    pub fn of(protocol_id: &str) -> Option<Talk> {
        super::by_id(protocol_id).and_then(|entry| entry.talk)
    }

    /// The action saying `text` (trimmed), or why the contract would refuse it.
    pub fn action(&self, text: &str) -> Result<Value, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err(format!("{} is empty", self.field));
        }
        if text.len() > self.max_bytes {
            return Err(format!(
                "{} is {} bytes; this room takes at most {}",
                self.field,
                text.len(),
                self.max_bytes
            ));
        }
        Ok(json!({"kind": self.kind, self.field: text}))
    }
}
