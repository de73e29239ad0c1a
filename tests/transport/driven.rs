//! Sessions whose engine threads drive their process's runtime (`SessionDriver`, as `host`
//! and `join` run them): frames flow both ways, a frame sent just before its engine goes
//! away from the runtime (a hook, a person) still leaves at once, an engine away still
//! answers its peer's heartbeat, and both ends close cleanly and promptly.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use aigenora::transport::{Channel, ChannelError, HeartbeatConfig, IrohChannel, Ticket};
use serde_json::{Value, json};

use crate::support::transport::{EventLog, driven_side, offline_endpoint, offline_guest};

const ROUNDS: u64 = 40;
/// The host's engine stays away from its runtime this long once, mid-game: long enough for
/// the guest's watchdog (it looks once a second) to look while the host has been away for
/// more than the heartbeat timeout below, so only the host's main thread driving its
/// runtime keeps the guest hearing it.
const AWAY: Duration = Duration::from_millis(1500);
const HEARTBEAT: HeartbeatConfig = HeartbeatConfig {
    interval: Duration::from_millis(20),
    timeout: Duration::from_millis(200),
};

/// The host's engine: sends each round's frame and takes the guest's answer; mid-game it
/// goes away right after a send. Its answers, and when it sent that frame.
fn host_engine(mut channel: IrohChannel, events: &EventLog) -> (Vec<Value>, Instant) {
    channel.start_heartbeat(HEARTBEAT, events.sink());
    let mut answers = Vec::new();
    let mut sent_before_away = Instant::now();
    for round in 0..ROUNDS {
        channel
            .send(&json!({"action": "ask", "round": round}))
            .unwrap();
        if round == ROUNDS / 2 {
            sent_before_away = Instant::now();
            std::thread::sleep(AWAY);
        }
        answers.push(channel.recv().unwrap());
    }
    channel.send(&json!({"action": "end"})).unwrap();
    channel.close().unwrap();
    (answers, sent_before_away)
}

/// The guest's engine: answers every frame until the end, then closes at once (as an
/// engine does). How many it answered, and when the frame sent before the host went away
/// arrived.
fn guest_engine(
    mut channel: IrohChannel,
    events: &EventLog,
) -> Result<(u64, Option<Instant>), ChannelError> {
    channel.start_heartbeat(HEARTBEAT, events.sink());
    let (mut answered, mut arrived) = (0, None);
    loop {
        let frame = channel.recv()?;
        if frame["action"] == "end" {
            break;
        }
        if frame["round"] == ROUNDS / 2 {
            arrived = Some(Instant::now());
        }
        channel.send(&json!({"action": "answer", "round": frame["round"]}))?;
        answered += 1;
    }
    channel.close()?;
    Ok((answered, arrived))
}

#[test]
fn driven_engines_play_answer_heartbeats_while_away_and_close_cleanly() {
    let (host_events, guest_events) = (EventLog::default(), EventLog::default());
    let (ticket_to_guest, ticket) = mpsc::channel::<Ticket>();

    let events = host_events.clone();
    let host = std::thread::spawn(move || {
        let connect = async move {
            let mut endpoint = offline_endpoint().await;
            ticket_to_guest
                .send(endpoint.ticket().await.unwrap())
                .unwrap();
            let link = endpoint.accept_first().await.unwrap();
            (endpoint, link)
        };
        driven_side(connect, move |channel| host_engine(channel, &events))
    });

    let events = guest_events.clone();
    let guest = std::thread::spawn(move || {
        let ticket = ticket.recv().unwrap();
        let connect = async move { offline_guest(&ticket).await };
        driven_side(connect, move |channel| guest_engine(channel, &events))
    });

    let started = Instant::now();
    let (answers, sent_before_away) = host.join().unwrap();
    assert!(
        started.elapsed() < AWAY + Duration::from_secs(2),
        "both closed within a round trip or two, not the close grace: {:?}",
        started.elapsed()
    );
    let expected: Vec<Value> = (0..ROUNDS)
        .map(|round| json!({"action": "answer", "round": round}))
        .collect();
    assert_eq!(answers, expected, "every answer, in order");
    let (answered, arrived) = guest.join().unwrap().unwrap();
    assert_eq!(answered, ROUNDS, "the guest answered every round");
    let delay = arrived.unwrap().saturating_duration_since(sent_before_away);
    assert!(
        delay < AWAY / 5,
        "the frame sent just before the host's engine went away left without it: {delay:?}"
    );
    assert!(
        guest_events.names().is_empty(),
        "the guest heard the host throughout, its engine away or not: {:?}",
        guest_events.names()
    );
    assert!(
        host_events.names().is_empty(),
        "the host heard the guest throughout: {:?}",
        host_events.names()
    );
}
