//! The session tools: this machine's sessions, a session's view and events (from a cursor),
//! answering its decision window, its strategy, aborting it, and a long poll that returns
//! when a decision is due or the session is over.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, RequestMetaObject};
use rmcp::{Peer, RoleServer, tool, tool_router};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::super::session_control::{StrategyChange, change_strategy, snapshot_view};
use super::super::session_local::{FollowEnd, signal_abort};
use super::progress::Progress;
use super::{Aigenora, answer, blocking};
use crate::control::Target;
use crate::decision::submit::{self, DecisionInput, Submitter};
use crate::session::list_sessions;

/// Longest events.jsonl line returned (longer ones are skipped).
const MAX_EVENT_LINE: usize = 1 << 20;
/// Most events one call returns.
const MAX_EVENTS: usize = 1000;
/// Longest one `session_wait` waits.
const MAX_WAIT: Duration = Duration::from_secs(600);
/// Longest progress message (in characters) of a `session_wait`.
const MAX_PROGRESS_LINE: usize = 300;
/// How often `session_wait` looks at the session's files.
const POLL: Duration = Duration::from_millis(100);

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub struct WhichInput {
    /// The session's state_dir (as host/join returned it). Default: the newest session.
    #[serde(default)]
    pub state_dir: Option<PathBuf>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct EventsInput {
    #[serde(flatten)]
    pub which: WhichInput,
    /// How many events were already read (the next_cursor of the previous call); default 0.
    #[serde(default)]
    pub cursor: usize,
    /// At most this many events (default and maximum 1000).
    #[serde(default)]
    pub limit: Option<usize>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct DecideInput {
    #[serde(flatten)]
    pub which: WhichInput,
    /// The move (`rock`, `42`, `7H`, a table choice's number) or a whole decision object as
    /// JSON text (a table's amount or pick: `{"choice": {"index": 5, "pick": ["c3", "c17"]}}`).
    pub decision: String,
    /// The seq of the window this answers (from session_snapshot or session_wait): refused
    /// as too late unless that window is still open.
    #[serde(default)]
    pub window: Option<u64>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct StrategyInput {
    #[serde(flatten)]
    pub which: WhichInput,
    /// Replace strategy.json with this object.
    #[serde(default)]
    pub set: Option<Map<String, Value>>,
    /// Deep-merge this object into strategy.json.
    #[serde(default)]
    pub merge: Option<Map<String, Value>>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ActionInput {
    #[serde(flatten)]
    pub which: WhichInput,
    /// The action for the room, e.g. {"kind": "send", "text": "hello"}.
    pub action: Map<String, Value>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct WaitInput {
    #[serde(flatten)]
    pub which: WhichInput,
    /// Return at the latest after this many seconds (default 30, at most 600).
    #[serde(default)]
    pub timeout_seconds: Option<f64>,
    /// Only a window with a greater seq counts (pass the seq you already answered).
    #[serde(default)]
    pub after_window: Option<u64>,
}

#[tool_router(router = sessions_router, vis = "pub(super)")]
impl Aigenora {
    #[tool(description = "This machine's sessions, newest first, with their state dirs.")]
    async fn session_list(&self) -> CallToolResult {
        let data_dir = self.data_dir();
        answer(
            blocking(move || {
                let rows: Vec<Value> = list_sessions(&data_dir)
                    .into_iter()
                    .map(|(dir, record)| {
                        let mut row = record.to_object();
                        row.insert("session_dir".into(), json!(dir));
                        Value::Object(row)
                    })
                    .collect();
                Ok(json!({"sessions": rows}))
            })
            .await,
        )
    }

    #[tool(
        description = "A session now: status, roles and control modes, winner and end reason, \
                       what the hooks publish (phase, score, board), and the open decision \
                       window with its legal choices and deadline."
    )]
    async fn session_snapshot(&self, Parameters(input): Parameters<WhichInput>) -> CallToolResult {
        let data_dir = self.data_dir();
        answer(blocking(move || Ok(snapshot_view(&target(&input, &data_dir)?))).await)
    }

    #[tool(
        description = "A session's events from a cursor: {events, next_cursor, ended}. Pass \
                       next_cursor back to read only what is new."
    )]
    async fn session_events(&self, Parameters(input): Parameters<EventsInput>) -> CallToolResult {
        let data_dir = self.data_dir();
        answer(
            blocking(move || {
                let target = target(&input.which, &data_dir)?;
                let ended = FollowEnd::of(&target.dir).is_some();
                let lines =
                    crate::layout::jsonl::read_lines(&target.dir.events_file(), MAX_EVENT_LINE);
                let limit = input.limit.unwrap_or(MAX_EVENTS).min(MAX_EVENTS);
                let events: Vec<Value> = lines
                    .iter()
                    .skip(input.cursor)
                    .take(limit)
                    .map(|line| serde_json::from_str(line).unwrap_or(Value::String(line.clone())))
                    .collect();
                let next = input.cursor.min(lines.len()) + events.len();
                Ok(json!({"events": events, "next_cursor": next, "ended": ended}))
            })
            .await,
        )
    }

    #[tool(
        description = "Answer the open decision window with a move. Returns what happened: \
                       played, queued (for a later window), refused (with the reason; the \
                       window stays open) or closed (too late)."
    )]
    async fn session_decide(&self, Parameters(input): Parameters<DecideInput>) -> CallToolResult {
        let data_dir = self.data_dir();
        answer(
            blocking(move || {
                let target = target(&input.which, &data_dir)?;
                let Some(engine_dir) = target.engine_dir() else {
                    anyhow::bail!(
                        "the session in {} has no engine state yet (not started)",
                        target.dir.root().display()
                    );
                };
                let submitter = Submitter {
                    origin: "mcp".into(),
                    agent_id: None,
                    idempotency_key: None,
                    answering: input.window,
                };
                let answer = submit::submit(
                    &engine_dir,
                    target.record.local_control_mode,
                    DecisionInput::parse(&input.decision),
                    &submitter,
                    Duration::from_secs(5),
                );
                Ok(serde_json::to_value(answer)?)
            })
            .await,
        )
    }

    #[tool(
        description = "Show the hooks' strategy.json, or replace (set) or deep-merge (merge) it."
    )]
    async fn session_strategy(
        &self,
        Parameters(input): Parameters<StrategyInput>,
    ) -> CallToolResult {
        let data_dir = self.data_dir();
        answer(
            blocking(move || {
                let target = target(&input.which, &data_dir)?;
                let change = match (input.set, input.merge) {
                    (Some(set), _) => StrategyChange::Set(set),
                    (None, Some(merge)) => StrategyChange::Merge(merge),
                    (None, None) => StrategyChange::Show,
                };
                Ok(Value::Object(change_strategy(&target, change)?))
            })
            .await,
        )
    }

    #[tool(
        description = "Stop a running session: its process records the abort and the peer sees \
                       it leave."
    )]
    async fn session_abort(&self, Parameters(input): Parameters<WhichInput>) -> CallToolResult {
        let data_dir = self.data_dir();
        answer(
            blocking(move || {
                let target = target(&input, &data_dir)?;
                let pid = signal_abort(&target.dir)?;
                Ok(json!({"status": "aborting", "pid": pid, "state_dir": target.dir.root()}))
            })
            .await,
        )
    }

    #[tool(
        description = "Rooms: queue one action (a JSON object) for the room this session sits \
                       in; the member sends it to the leader and its receipt becomes a \
                       group_action_receipt event."
    )]
    async fn session_action(&self, Parameters(input): Parameters<ActionInput>) -> CallToolResult {
        let data_dir = self.data_dir();
        answer(
            blocking(move || {
                let target = target(&input.which, &data_dir)?;
                let line = crate::control::room::queue(&target, Value::Object(input.action))?;
                Ok(json!({"status": "ok", "action": line["action"], "state_dir": target.dir.root()}))
            })
            .await,
        )
    }

    #[tool(
        description = "Wait until the session opens a decision window (newer than after_window) \
                       or ends, or until timeout_seconds: {reason: decision|ended|timeout, \
                       view} with view as session_snapshot returns it."
    )]
    async fn session_wait(
        &self,
        Parameters(input): Parameters<WaitInput>,
        meta: RequestMetaObject,
        peer: Peer<RoleServer>,
    ) -> CallToolResult {
        answer(self.wait(input, &meta, peer).await)
    }
}

/// What a `session_wait` waits for, and where the session is now (its status, phase and
/// latest event), in one line.
fn waiting_for(target: &Target, view: &Value, after: u64) -> String {
    let text = |value: &Value| match value {
        Value::String(text) => text.clone(),
        Value::Null => "-".into(),
        other => other.to_string(),
    };
    let mut line = format!(
        "waiting for a decision window after #{after} or the end of session {}: status {}, phase {}, last: {}",
        target.name(),
        text(&view["status"]),
        text(&view["snapshot"]["phase"]),
        text(&view["snapshot"]["last_event"]["summary"]),
    );
    if let Some((cut, _)) = line.char_indices().nth(MAX_PROGRESS_LINE) {
        line.truncate(cut);
    }
    crate::terminal::escape_control(&line).into_owned()
}

fn target(which: &WhichInput, data_dir: &crate::layout::DataDir) -> anyhow::Result<Target> {
    Target::resolve(which.state_dir.as_deref(), data_dir)
}

impl Aigenora {
    async fn wait(
        &self,
        input: WaitInput,
        meta: &RequestMetaObject,
        peer: Peer<RoleServer>,
    ) -> anyhow::Result<Value> {
        let limit = input
            .timeout_seconds
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map_or(Duration::from_secs(30), Duration::from_secs_f64)
            .min(MAX_WAIT);
        let deadline = Instant::now() + limit;
        let data_dir = self.data_dir();
        let which = input.which;
        let after = input.after_window.unwrap_or(0);
        let mut progress = Progress::new(meta, peer, limit);
        loop {
            let target = target(&which, &data_dir)?;
            // Looked at before reading the view, so an ended session's view is its final one.
            let over = FollowEnd::of(&target.dir).is_some();
            let view = snapshot_view(&target);
            let seq = view["window"]["seq"].as_u64();
            let reason = if seq.is_some_and(|seq| seq > after) {
                Some("decision")
            } else if over {
                Some("ended")
            } else if Instant::now() >= deadline {
                Some("timeout")
            } else {
                None
            };
            if let Some(reason) = reason {
                return Ok(json!({"reason": reason, "state_dir": target.dir.root(), "view": view}));
            }
            progress.report(waiting_for(&target, &view, after)).await;
            tokio::time::sleep(POLL).await;
        }
    }
}
