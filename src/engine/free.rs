//! free: a chat. After join/ready either side sends `{"action":"chat","text","seq"}` lines
//! whenever it likes; `/quit` sends `{"action":"end"}` and either side's end ends both.
//! Local lines come from a [`LocalInput`]: stdin/inbox feeders, or a script for tests.

use std::collections::VecDeque;
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::Duration;

use serde_json::{Value, json};

use super::session::Session;
use super::{EngineError, Outcome};
use crate::records::{Event, MessageDirection};
use crate::spec::{Direction, Role};

/// How long the loop waits for a peer frame before looking at local input again.
const POLL: Duration = Duration::from_millis(20);

/// What the local side wants to do right now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputPoll {
    /// Send this line (`/quit` ends the chat).
    Line(String),
    /// Nothing yet.
    Idle,
    /// Nothing ever again; keep listening to the peer.
    Exhausted,
}

/// A source of local chat lines.
pub trait LocalInput: Send {
    /// Polls without blocking; `received` counts the peer's chat messages so far.
    fn poll(&mut self, received: usize) -> InputPoll;
}

/// Lines arriving on a queue (fed by a stdin reader or an inbox watcher).
pub struct LineInput(pub Receiver<String>);

impl LocalInput for LineInput {
    fn poll(&mut self, _received: usize) -> InputPoll {
        match self.0.try_recv() {
            Ok(line) => InputPoll::Line(line),
            Err(TryRecvError::Empty) => InputPoll::Idle,
            Err(TryRecvError::Disconnected) => InputPoll::Exhausted,
        }
    }
}

/// One step of a scripted conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScriptStep {
    Say(String),
    /// Wait until the peer has sent this many chat messages in total.
    AwaitPeer(usize),
}

/// A fixed conversation, for `protocol test` and demos.
pub struct ScriptedInput(VecDeque<ScriptStep>);

impl ScriptedInput {
    pub fn new(steps: impl IntoIterator<Item = ScriptStep>) -> ScriptedInput {
        ScriptedInput(steps.into_iter().collect())
    }
}

impl LocalInput for ScriptedInput {
    fn poll(&mut self, received: usize) -> InputPoll {
        match self.0.front() {
            None => InputPoll::Exhausted,
            Some(ScriptStep::AwaitPeer(count)) if received < *count => InputPoll::Idle,
            Some(ScriptStep::AwaitPeer(_)) => {
                self.0.pop_front();
                self.poll(received)
            }
            Some(ScriptStep::Say(_)) => match self.0.pop_front() {
                Some(ScriptStep::Say(line)) => InputPoll::Line(line),
                _ => unreachable!("front was a Say step"),
            },
        }
    }
}

pub(crate) fn run(
    session: &mut Session,
    input: Option<Box<dyn LocalInput>>,
) -> Result<Outcome, EngineError> {
    handshake(session)?;
    session.phase("chatting", "Chat ready", json!({}))?;
    let mut input = input;
    let mut sent = 0u64;
    let mut received = 0usize;
    // A chat has no turns: it ends when neither side has said anything for the peer wait.
    let mut last_said = std::time::Instant::now();
    loop {
        if last_said.elapsed() >= session.peer_wait {
            return Err(EngineError::PeerTimeout(session.peer_wait));
        }
        while let Some(local) = input.as_mut() {
            match local.poll(received) {
                InputPoll::Line(text) if text.trim() == "/quit" => return end_locally(session),
                InputPoll::Line(text) => {
                    sent += 1;
                    last_said = std::time::Instant::now();
                    let message = json!({"action": "chat", "text": text, "seq": sent});
                    session.send_as("the chat input", &message, Direction::Both)?;
                    if let Err(error) = session.hooks.on_send(&message) {
                        eprintln!("[aigenora] free-mode proto_on_send failed: {error}");
                    }
                }
                InputPoll::Idle => break,
                InputPoll::Exhausted => input = None,
            }
        }
        let Some(frame) = session.recv_raw_timeout(POLL)? else {
            continue;
        };
        if let Err(error) =
            crate::spec::validate_message(session.spec.value(), &frame, Some(Direction::Both), None)
        {
            eprintln!("[aigenora] free-mode receiver dropped invalid message: {error}");
            session.emit(Event::message_rejected("both", &error.0, &frame));
            continue;
        }
        session.emit(Event::ProtocolMessage {
            direction: MessageDirection::Received,
            msg: frame.clone(),
        });
        if frame == json!({"action": "end"}) {
            report(session.hooks.on_end(), "proto_on_end");
            session.finish(true, "completed", "ended", "Free mode session ended")?;
            return Ok(Outcome::ended(true, None));
        }
        received += 1;
        last_said = std::time::Instant::now();
        report(session.hooks.on_message(&frame), "proto_on_message");
    }
}

fn handshake(session: &mut Session) -> Result<(), EngineError> {
    match session.role() {
        Role::Host => {
            let join = session.recv_raw()?;
            validate(session, &join, Direction::GuestToHost)?;
            session.send_as(
                "the engine (ready)",
                &json!({"action": "ready"}),
                Direction::HostToGuest,
            )?;
        }
        Role::Guest => {
            session.send_as(
                "the engine (join)",
                &json!({"action": "join"}),
                Direction::GuestToHost,
            )?;
            let ready = session.recv_raw()?;
            validate(session, &ready, Direction::HostToGuest)?;
        }
    }
    Ok(())
}

fn validate(session: &Session, frame: &Value, direction: Direction) -> Result<(), EngineError> {
    crate::spec::validate_message(session.spec.value(), frame, Some(direction), None).map_err(
        |error| EngineError::InvalidInbound {
            direction,
            error,
            frame: frame.clone(),
        },
    )
}

fn end_locally(session: &mut Session) -> Result<Outcome, EngineError> {
    session.send_as(
        "the chat input (/quit)",
        &json!({"action": "end"}),
        Direction::Both,
    )?;
    report(session.hooks.on_end(), "proto_on_end");
    session.finish(true, "completed", "ended", "Free mode session ended")?;
    Ok(Outcome::ended(true, None))
}

/// Free mode keeps chatting through hook errors, as the reference does; they go to stderr.
fn report(result: Result<(), crate::hooks::HookError>, hook: &str) {
    if let Err(error) = result {
        eprintln!("[aigenora] free-mode {hook} failed: {error}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_wait_for_the_peer() {
        let mut script = ScriptedInput::new([
            ScriptStep::Say("hi".into()),
            ScriptStep::AwaitPeer(1),
            ScriptStep::Say("/quit".into()),
        ]);
        assert_eq!(script.poll(0), InputPoll::Line("hi".into()));
        assert_eq!(script.poll(0), InputPoll::Idle);
        assert_eq!(script.poll(1), InputPoll::Line("/quit".into()));
        assert_eq!(script.poll(1), InputPoll::Exhausted);
    }
}
