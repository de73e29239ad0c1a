//! What the room interop tests share: a Community Room contract in an agent's hands, the
//! seats of a room (ours or the reference's) with their verified views and `session
//! action`, and readers of those views.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::support::net::{Agent, Background, Net, SessionFiles, wait_until};
use crate::support::process::Proc;
use crate::support::reference::{
    ReferenceAgent, ReferenceContract, install_reference_protocol, reference_cli,
    reference_contract,
};

pub const LIMIT: Duration = Duration::from_secs(120);

/// How our seats here take part: they send only what a test queues with `session action`.
/// (An autonomous table seat plays by itself; a human one plays only decisions, and nobody
/// makes any here.)
pub const SCRIPTED: [&str; 4] = ["--control-mode", "human", "--think-seconds", "3600"];

/// The texts of the messages a room view shows (ours in `room.json`, the reference's in
/// `snapshot.json`).
pub fn texts(path: &Path) -> Vec<String> {
    let Some(room) = std::fs::read_to_string(path)
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
    else {
        return Vec::new();
    };
    room["view"]["messages"]
        .as_array()
        .or(room["group_view"]["messages"].as_array())
        .map(|messages| {
            messages
                .iter()
                .filter_map(|m| m["text"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

pub fn session_with(agent_dir: &Path, file: &str) -> Option<PathBuf> {
    std::fs::read_dir(agent_dir.join("sessions"))
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join(file).is_file())
}

/// One seat of the room, and where its verified view is kept.
pub enum Seat {
    Ours {
        agent: Agent,
        process: Proc,
        session: PathBuf,
    },
    Theirs {
        agent: ReferenceAgent,
        process: Background,
    },
}

impl Seat {
    /// The seat's session directory (its events, its files).
    pub fn dir(&self) -> &Path {
        match self {
            Seat::Ours { session, .. } => session,
            Seat::Theirs { process, .. } => &process.state_dir,
        }
    }

    /// Who the seat is and what it sees: (its public key, its verified view).
    pub fn seen(&self) -> Option<(String, Value)> {
        let room = json_at(&self.view())?;
        let view = match self {
            Seat::Ours { .. } => room["view"].clone(),
            Seat::Theirs { .. } => room["group_view"].clone(),
        };
        Some((view["you"]["public_key"].as_str()?.to_string(), view))
    }

    pub fn view(&self) -> PathBuf {
        match self {
            Seat::Ours { session, .. } => session.join("room.json"),
            Seat::Theirs { process, .. } => process.state_dir.join("snapshot.json"),
        }
    }

    /// The events of `kind` the seat recorded so far.
    pub fn events(&self, kind: &str) -> Vec<Value> {
        SessionFiles::read(self.dir())
            .events_of(kind)
            .into_iter()
            .cloned()
            .collect()
    }

    /// Waits until the seat's verified view shows every one of `wanted`.
    pub fn wait_for_texts(&self, wanted: &[&str]) {
        let view = self.view();
        let all = wait_until(LIMIT, || {
            let seen = texts(&view);
            wanted
                .iter()
                .all(|w| seen.iter().any(|s| s == w))
                .then_some(())
        });
        assert!(
            all.is_some(),
            "{} shows {:?}, not all of {wanted:?}",
            view.display(),
            texts(&view)
        );
    }

    /// Sends a message to the room (its `send` action).
    pub fn say(&self, text: &str) {
        self.act(&format!(r#"{{"kind":"send","text":"{text}"}}"#));
    }

    /// Queues one action (JSON) with the seat's own `session action`.
    pub fn act(&self, action: &str) {
        match self {
            Seat::Ours { agent, session, .. } => {
                agent.ok(&[
                    "session",
                    "action",
                    "--state-dir",
                    session.to_str().unwrap(),
                    "--action",
                    action,
                ]);
            }
            Seat::Theirs { agent, process } => {
                reference_action(&process.state_dir, &agent.server, action);
            }
        }
    }
}

/// A JSON file's value, once it is there and whole.
pub fn json_at(path: &Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// A four-seat table of the well-known contract `alias` led by our agent on our hooks
/// (`options` its options), with three reference members seated: our leader first.
pub fn our_leaders_table(net: &Net, alias: &str, options: &str) -> Vec<Seat> {
    our_leaders_mixed_table(net, alias, options, 0)
}

/// [`our_leaders_table`] with `ours` of its members ours (seated first, after the leader)
/// and the rest the reference's.
pub fn our_leaders_mixed_table(net: &Net, alias: &str, options: &str, ours: usize) -> Vec<Seat> {
    let table = reference_contract(alias);
    let leader = net.agent("leader");
    let agents: Vec<_> = ["west", "north", "east"]
        .map(|name| net.reference_agent(name))
        .into_iter()
        .collect();
    // (the spec reaches the server from a reference agent; our leader fetches it by its id)
    agents[0].register_protocol(&table.protocol_id);
    let mut args = vec!["--protocol", alias, "--options", options];
    args.extend_from_slice(&SCRIPTED);
    let (hosting, post_id) = leader.host_with(&args);
    let mut seats = Vec::new();
    for name in ["ours-1", "ours-2", "ours-3"].into_iter().take(ours) {
        seats.push(our_follower(net, name, &post_id));
    }
    for agent in agents.into_iter().skip(ours) {
        agent.register_protocol(&table.protocol_id);
        let (_, process) = agent.daemon(&["join", &post_id, "--no-web"]);
        seats.push(Seat::Theirs { agent, process });
    }
    let session = wait_until(LIMIT, || session_with(&leader.dir, "room.json"))
        .expect("our leader started the table with four seats");
    seats.insert(
        0,
        Seat::Ours {
            agent: leader,
            process: hosting,
            session,
        },
    );
    seats
}

/// A four-seat table of the well-known contract `alias` led by a reference agent on its own
/// hooks (`options` its host options), with our member (seat 1) and two reference members
/// seated: the leader first.
pub fn reference_leaders_table(net: &Net, alias: &str, options: &str) -> Vec<Seat> {
    let (leader, post_id) = reference_leader(net, alias, options);
    let table = reference_contract(alias);
    let mut seats = vec![leader];
    seats.push(our_follower(net, "ours", &post_id));
    for name in ["south", "west"] {
        let agent = net.reference_agent(name);
        agent.register_protocol(&table.protocol_id);
        let (_, process) = agent.daemon(&["join", &post_id, "--no-web"]);
        seats.push(Seat::Theirs { agent, process });
    }
    seats
}

/// A reference agent hosting the well-known contract `alias` on its own hooks (`options` its
/// host options): its seat, and the room's post id.
pub fn reference_leader(net: &Net, alias: &str, options: &str) -> (Seat, String) {
    let table = reference_contract(alias);
    let host = net.reference_agent("host");
    host.register_protocol(&table.protocol_id);
    let dir = host.protocol_dir(&table.protocol_id);
    let (hosting, process) = host.daemon(&[
        "host",
        "--protocol-dir",
        dir.to_str().unwrap(),
        "--options",
        options,
        "--no-web",
    ]);
    let post_id = hosting["post_id"].as_str().unwrap().to_string();
    let leader = Seat::Theirs {
        agent: host,
        process,
    };
    (leader, post_id)
}

/// The other seats' keys in the view's `turn_order`, starting with the one after `key`.
pub fn seats_after<'a>(view: &'a Value, key: &str) -> Vec<&'a str> {
    let order: Vec<&str> = view["turn_order"]
        .as_array()
        .expect("the view has a turn_order")
        .iter()
        .map(|seat| seat.as_str().unwrap())
        .collect();
    let at = order.iter().position(|seat| *seat == key).unwrap();
    (1..order.len())
        .map(|step| order[(at + step) % order.len()])
        .collect()
}

/// The seat whose key is `key`.
pub fn seat_of<'a>(seats: &'a [Seat], key: &str) -> &'a Seat {
    seats
        .iter()
        .find(|seat| seat.seen().is_some_and(|(own, _)| own == key))
        .expect("the seat to act is at the table")
}

/// The seat of `key` acts, with the action `choose` makes of its own view, once that view is
/// `at` by `progress` (where the leader has the table); returns once the leader's view
/// (`seats[0]`) has moved on.
pub fn act_when_current<P: PartialEq>(
    seats: &[Seat],
    key: &str,
    choose: impl Fn(&Value) -> Value,
    (progress, at): (impl Fn(&Value) -> P, P),
) {
    let seat = seat_of(seats, key);
    let view = wait_until(LIMIT, || {
        let (_, view) = seat.seen()?;
        (progress(&view) == at).then_some(view)
    })
    .expect("the seat caught up with the leader");
    seat.act(&choose(&view).to_string());
    let taken = wait_until(LIMIT, || {
        let (_, view) = seats[0].seen()?;
        (progress(&view) != at).then_some(())
    });
    assert!(
        taken.is_some(),
        "the leader took the action {} of {key}: the leader's last events {}",
        choose(&view),
        last_lines(&seats[0].dir().join("events.jsonl"), 12)
    );
}

/// The last `count` lines of a text file (what a failing test shows of a seat's events).
fn last_lines(path: &Path, count: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(count)..].join("\n")
}

/// Sends `action` from `seat` and waits for the leader's refusal with `reason` in it.
pub fn refused(seat: &Seat, action: &str, reason: &str) {
    seat.act(action);
    wait_until(LIMIT, || {
        let receipts = seat.events("group_action_receipt");
        receipts.into_iter().find(|r| {
            r["status"] == "rejected" && r["reason"].as_str().is_some_and(|t| t.contains(reason))
        })
    })
    .unwrap_or_else(|| {
        panic!(
            "the leader refused with \"{reason}\": {:?}",
            seat.events("group_action_receipt")
        )
    });
}

/// The id of the lowest card (by `order`) of `hand` that `follows` the lead, else of any.
pub fn lowest_card<K: Ord>(
    hand: &[Value],
    follows: impl Fn(&Value) -> bool,
    order: impl Fn(&Value) -> K,
) -> String {
    let following: Vec<&Value> = hand.iter().filter(|c| follows(c)).collect();
    let choices = if following.is_empty() {
        hand.iter().collect()
    } else {
        following
    };
    let card = choices
        .into_iter()
        .min_by_key(|c| order(c))
        .expect("a card to play");
    card["card_id"].as_str().unwrap().to_string()
}

/// The outcome and the last view once `seat` sees the table end, with no frame it refused.
pub fn ended(seat: &Seat) -> (Value, Value) {
    let outcome = wait_until(LIMIT, || {
        let room = json_at(&seat.view())?;
        (room["completed"] == true).then(|| room["outcome"].clone())
    })
    .expect("the seat saw the table end");
    let (_, view) = seat.seen().unwrap();
    assert_eq!(view["phase"], "completed", "{view}");
    let events = std::fs::read_to_string(seat.dir().join("events.jsonl")).unwrap();
    assert!(!events.contains("frame_rejected"), "{events}");
    (outcome, view)
}

/// Each seat's key and view once it holds `cards` cards (in seat order), checked so that no
/// view shows a card of another seat's hand.
pub fn dealt(seats: &[Seat], cards: usize) -> Vec<(String, Value)> {
    let hands: Vec<(String, Value)> = seats
        .iter()
        .map(|seat| {
            wait_until(LIMIT, || {
                let (key, view) = seat.seen()?;
                (view["my_hand"].as_array()?.len() == cards).then_some((key, view))
            })
            .expect("every seat was dealt its cards")
        })
        .collect();
    for (key, view) in &hands {
        for (other, theirs) in &hands {
            if other != key {
                for card in theirs["my_hand"].as_array().unwrap() {
                    assert!(
                        !view.to_string().contains(card["card_id"].as_str().unwrap()),
                        "{key} sees {other}'s card"
                    );
                }
            }
        }
    }
    hands
}

/// The reference's Community Room (its spec and hooks) in a directory of `agent`'s, the
/// spec registered on the agent's server.
pub fn community_room(agent: &Agent) -> (ReferenceContract, PathBuf) {
    let room = reference_contract("community-room-v1");
    let dir = agent.dir.join("room");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(&room.spec, dir.join("spec.json")).unwrap();
    std::fs::copy(room.spec.with_file_name("hooks.py"), dir.join("hooks.py")).unwrap();
    agent.ok(&[
        "protocol",
        "register",
        dir.join("spec.json").to_str().unwrap(),
    ]);
    (room, dir)
}

/// One of our members in the room of `post_id`, holding the room's hooks (it can lead).
pub fn our_member(net: &Net, name: &str, protocol_id: &str, post_id: &str) -> Seat {
    let agent: Agent = net.agent(name);
    install_reference_protocol(&agent, protocol_id);
    seated(agent, name, post_id, &SCRIPTED)
}

/// One of our members in the room of `post_id` with no hooks of its own (it follows only).
pub fn our_follower(net: &Net, name: &str, post_id: &str) -> Seat {
    our_follower_in(net, name, post_id, &SCRIPTED)
}

/// [`our_follower`] joined with `control` (its control flags) instead of [`SCRIPTED`].
pub fn our_follower_in(net: &Net, name: &str, post_id: &str, control: &[&str]) -> Seat {
    seated(net.agent(name), name, post_id, control)
}

fn seated(agent: Agent, name: &str, post_id: &str, control: &[&str]) -> Seat {
    let process = Proc::spawn(
        name,
        agent.command(&[&["join", post_id][..], control].concat()),
    );
    // Admitted: in a room still in its lobby no envelope (and no room.json) comes yet.
    let session = wait_until(LIMIT, || {
        let session = session_with(&agent.dir, "events.jsonl")?;
        (!SessionFiles::read(&session)
            .events_of("group_member_admitted")
            .is_empty())
        .then_some(session)
    })
    .unwrap_or_else(|| panic!("{name} was admitted"));
    Seat::Ours {
        agent,
        process,
        session,
    }
}

/// A reference member in the room of `post_id` (its own hooks: it can lead).
pub fn their_member(net: &Net, name: &str, protocol_id: &str, post_id: &str) -> Seat {
    let agent: ReferenceAgent = net.reference_agent(name);
    agent.register_protocol(protocol_id);
    let (_, process) = agent.daemon(&["join", post_id, "--no-web"]);
    wait_until(LIMIT, || {
        process
            .state_dir
            .join("snapshot.json")
            .is_file()
            .then_some(())
    })
    .unwrap_or_else(|| panic!("{name} was admitted"));
    Seat::Theirs { agent, process }
}

/// The reference's own `session action` on its session in `state_dir`.
pub fn reference_action(state_dir: &Path, server: &str, action: &str) {
    let output = reference_cli()
        .args(["session", "action", "--state-dir"])
        .arg(state_dir)
        .args(["--action", action])
        .env("P2P_SERVER", server)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "reference session action: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}
