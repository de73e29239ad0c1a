//! Fair deals between our clients (docs/fair-deals.md): a member of
//! ours announces itself in its `ready` frame, adds a fresh seed of its own to every deal its
//! leader commits to, keeps its first view of the dealt hand, and once the leader opens its
//! seed checks that hand with the table's own dealing code (`proto_group_check_deal`),
//! recording `deal_verified` or `deal_mismatch`. The leader's half is [`announce`] and the
//! deal's deadline ([`SeedWait`]); the dealing itself is the SDK's `aigenora.proto.fair_deal`.
//! A leader that commits to nothing (a reference leader) is simply followed.

use std::cell::RefCell;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::admission::random_hex;
use super::lead::Arrival;
use super::member::{ActionSource, MemberEvents};
use super::seat::MemberHooks;
use crate::hooks::python_hooks::PythonHooks;
use crate::records::{Event, EventLog, ReceiptSource};
use crate::room::Replica;
use crate::room::checkpoint::RoomMember;
use crate::room::replica::Verified;
use crate::wire::group::Receipt;

/// The most verdicts `room.json` keeps (the newest).
const KEPT_VERDICTS: usize = 32;

/// The leader's half: tells its hooks which of these arrivals take part in fair deals.
pub fn announce<'a>(hooks: &PythonHooks, arrivals: impl IntoIterator<Item = &'a Arrival>) {
    let keys: Vec<String> = arrivals
        .into_iter()
        .filter(|arrival| arrival.fair_deal)
        .map(|arrival| arrival.member.public_key.clone())
        .collect();
    if !keys.is_empty() {
        // Hooks that cannot take the list only deal without the seats' seeds.
        let _ = hooks.announce_fair_deal_seats(&keys);
    }
}

/// Why the leader takes a seat out of the room when its seed did not come in time (the SDK's
/// `SEED_TIMEOUT` reads the same, and never awaits that seat again).
pub const SEED_TIMEOUT: &str = "fair_deal_seed_timeout";

/// What the leader reads of a deal in its own view.
#[derive(Deserialize)]
struct Deal {
    hand: String,
    awaited: Vec<String>,
    contributed: Vec<String>,
    /// How long the deal waits for its seeds (the room's `fair_deal_seed_seconds`).
    seed_seconds: u64,
}

/// A seat whose seed is overdue, and why it goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overdue {
    pub public_key: String,
    pub reason: String,
}

/// The leader's deadline on a deal waiting for seeds: a seat still awaited once the deal
/// has waited its `seed_seconds` is overdue, so one silent seat never stalls the table.
#[derive(Default)]
pub struct SeedWait {
    /// The commitment of the deal waiting, and since when the leader has seen it wait.
    waiting: Option<(String, Instant)>,
}

impl SeedWait {
    /// The seats overdue now, given the leader's view of the last step (each deal's
    /// overdue seats are named once). Called on every pass of the leader's loop, it reads
    /// the whole deal only once its time is up.
    pub fn overdue(&mut self, view: Option<&Value>) -> Vec<Overdue> {
        let fair = view
            .and_then(|view| view.get("fair_deal"))
            .filter(|fair| fair.get("status").and_then(Value::as_str) == Some("seeding"));
        let waiting = fair.and_then(|fair| {
            let commitment = fair.get("commitment")?.as_str()?;
            Some((commitment, fair.get("seed_seconds")?.as_u64()?))
        });
        let Some((commitment, seconds)) = waiting else {
            self.waiting = None;
            return Vec::new();
        };
        match &self.waiting {
            Some((seen, since)) if seen == commitment => {
                if since.elapsed() < Duration::from_secs(seconds) {
                    return Vec::new();
                }
            }
            _ => {
                self.waiting = Some((commitment.to_string(), Instant::now()));
                return Vec::new();
            }
        }
        self.waiting = Some((commitment.to_string(), Instant::now()));
        let Some(deal) = fair.and_then(|fair| Deal::deserialize(fair).ok()) else {
            return Vec::new();
        };
        deal.awaited
            .iter()
            .filter(|key| !deal.contributed.contains(key))
            .map(|key| Overdue {
                public_key: key.clone(),
                reason: format!(
                    "{SEED_TIMEOUT}: no seed for hand {} within {} s",
                    deal.hand, deal.seed_seconds
                ),
            })
            .collect()
    }
}

/// A member's verdict on one hand it was dealt, as `room.json` keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DealVerdict {
    pub hand: String,
    pub verified: bool,
    /// Why the hand is not the committed deal ("" when it is).
    #[serde(default)]
    pub reason: String,
    pub commitment: String,
    /// The leader's opened seed.
    pub seed: String,
    /// Every seat's seed, by public key.
    #[serde(default)]
    pub contributions: Map<String, Value>,
    /// The cards the committed deal gives this seat.
    #[serde(default)]
    pub expected: Vec<Value>,
    /// The cards this seat was dealt.
    #[serde(default)]
    pub seen: Vec<Value>,
}

impl DealVerdict {
    /// Adds this verdict to the newest ones kept (at most [`KEPT_VERDICTS`]).
    pub fn keep_in(&self, kept: &mut Vec<DealVerdict>) {
        if kept.len() >= KEPT_VERDICTS {
            kept.remove(0);
        }
        kept.push(self.clone());
    }

    fn event(&self) -> Event {
        if self.verified {
            Event::DealVerified {
                hand: self.hand.clone(),
                commitment: self.commitment.clone(),
                seed: self.seed.clone(),
            }
        } else {
            Event::DealMismatch {
                hand: self.hand.clone(),
                reason: self.reason.clone(),
                commitment: self.commitment.clone(),
                seed: self.seed.clone(),
                contributions: self.contributions.clone(),
                expected: self.expected.clone(),
                seen: self.seen.clone(),
            }
        }
    }
}

/// A member's fair deals, kept from one channel to the next.
pub struct FairDeals {
    seat: RefCell<Seat>,
}

struct Seat {
    /// The member's own copy of the room's hooks, which deal a hand again to check it.
    hooks: Option<MemberHooks>,
    events: EventLog,
    /// The seed to send, once handed out as an action.
    queued: Option<Map<String, Value>>,
    /// The commitment this member added its seed to, and the seed.
    sent: Option<(String, String)>,
    /// The commitment last seen waiting for seeds: only a hand seen before its deal is checked.
    seeding: Option<String>,
    /// The commitment and this member's first view of the hand dealt from it.
    first: Option<(String, Map<String, Value>)>,
    /// The commitment last checked.
    checked: Option<String>,
}

impl FairDeals {
    /// A member's fair deals: it takes part when it can check a deal (it holds the room's hooks).
    pub fn new(hooks: Option<MemberHooks>, events: EventLog) -> FairDeals {
        FairDeals {
            seat: RefCell::new(Seat {
                hooks,
                events,
                queued: None,
                sent: None,
                seeding: None,
                first: None,
                checked: None,
            }),
        }
    }

    /// Whether this member announces itself to its leader.
    pub fn takes_part(&self) -> bool {
        self.seat.borrow().hooks.is_some()
    }

    /// The member's actions and events with its fair deals in between: its seed goes out
    /// before the next action of `actions`, and every verified step is looked at first.
    pub fn around<'a>(
        &'a self,
        actions: &'a mut dyn ActionSource,
        events: &'a mut dyn MemberEvents,
    ) -> (Seeds<'a>, Checks<'a>) {
        (
            Seeds {
                seat: &self.seat,
                inner: actions,
            },
            Checks {
                seat: &self.seat,
                inner: events,
            },
        )
    }
}

/// The member's actions, its seeds first.
pub struct Seeds<'a> {
    seat: &'a RefCell<Seat>,
    inner: &'a mut dyn ActionSource,
}

impl ActionSource for Seeds<'_> {
    fn next_action(&mut self) -> Option<Map<String, Value>> {
        let seed = self.seat.borrow_mut().queued.take();
        seed.or_else(|| self.inner.next_action())
    }

    fn position(&self) -> Option<u64> {
        self.inner.position()
    }

    fn stopped(&self) -> Option<String> {
        self.inner.stopped()
    }

    fn ring_on_action(&mut self, bell: std::sync::Arc<crate::transport::Bell>) {
        self.inner.ring_on_action(bell);
    }
}

/// The member's events, each verified step looked at for a deal to seed or check.
pub struct Checks<'a> {
    seat: &'a RefCell<Seat>,
    inner: &'a mut dyn MemberEvents,
}

impl MemberEvents for Checks<'_> {
    fn step(&mut self, verified: &Verified, replica: &Replica) {
        if let Some(verdict) = self.seat.borrow_mut().step(replica) {
            self.inner.deal_checked(&verdict);
        }
        self.inner.step(verified, replica);
    }

    fn receipt(&mut self, receipt: &Receipt, source: ReceiptSource, action: &Map<String, Value>) {
        self.inner.receipt(receipt, source, action);
    }
}

impl Seat {
    /// Seeds the deal the view waits on, keeps the first view of a dealt hand, and checks a
    /// hand whose seed the view opens: the verdict, if one was reached.
    fn step(&mut self, replica: &Replica) -> Option<DealVerdict> {
        self.hooks.as_ref()?;
        let view = replica.view.as_ref()?;
        let fair = view.get("fair_deal")?.as_object()?;
        let commitment = text(fair, "commitment").to_string();
        let me = replica
            .checkpoint
            .as_ref()?
            .state
            .members
            .iter()
            .find(|m| m.public_key == replica.viewer)?
            .clone();
        let verdict = fair
            .get("opening")
            .and_then(Value::as_object)
            .and_then(|opening| self.check(opening, &me));
        match text(fair, "status") {
            "seeding" => {
                self.seeding = Some(commitment.clone());
                let awaited = listed(fair, "awaited", &me.public_key);
                let added = listed(fair, "contributed", &me.public_key);
                let sent = self.sent.as_ref().is_some_and(|(c, _)| *c == commitment);
                if awaited && !added && !sent {
                    let seed = random_hex::<32>();
                    self.queued = Some(seed_action(text(fair, "hand"), &seed));
                    self.sent = Some((commitment, seed));
                }
            }
            "dealt" => {
                let new_hand = self.first.as_ref().is_none_or(|(c, _)| *c != commitment);
                if new_hand && self.seeding.as_deref() == Some(commitment.as_str()) {
                    self.first = Some((commitment, view.clone()));
                }
            }
            _ => {}
        }
        verdict
    }

    /// The verdict on the hand kept, when `opening` opens its deal and it is not checked yet.
    fn check(&mut self, opening: &Map<String, Value>, me: &RoomMember) -> Option<DealVerdict> {
        let (commitment, first) = self.first.clone()?;
        if text(opening, "commitment") != commitment
            || self.checked.as_deref() == Some(commitment.as_str())
        {
            return None;
        }
        self.checked = Some(commitment.clone());
        let own_seed = match &self.sent {
            Some((c, seed)) if *c == commitment => seed.clone(),
            _ => String::new(),
        };
        let hooks = self.hooks.as_ref()?;
        let verdict = hooks
            .check_deal(&first, opening, me, &own_seed)
            .map_err(|failure| failure.message)
            .and_then(|value| serde_json::from_value(value).map_err(|e| e.to_string()));
        let verdict = verdict.unwrap_or_else(|reason| DealVerdict {
            hand: text(opening, "hand").to_string(),
            verified: false,
            reason: format!("the deal could not be checked: {reason}"),
            commitment,
            seed: text(opening, "seed").to_string(),
            contributions: Map::new(),
            expected: Vec::new(),
            seen: Vec::new(),
        });
        self.events.emit(verdict.event());
        Some(verdict)
    }
}

/// The action that adds `seed` to the deal of `hand`.
fn seed_action(hand: &str, seed: &str) -> Map<String, Value> {
    Map::from_iter([
        ("kind".to_string(), Value::from("deal_seed")),
        ("hand".to_string(), Value::from(hand)),
        ("seed".to_string(), Value::from(seed)),
    ])
}

fn text<'a>(map: &'a Map<String, Value>, key: &str) -> &'a str {
    map.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn listed(map: &Map<String, Value>, key: &str, public_key: &str) -> bool {
    map.get(key)
        .and_then(Value::as_array)
        .is_some_and(|keys| keys.iter().any(|k| k == public_key))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn view(status: &str, commitment: &str, seconds: u64) -> Value {
        json!({"fair_deal": {"hand": "2:0", "status": status, "commitment": commitment,
            "awaited": ["aa", "bb", "cc"], "contributed": ["bb"], "seed_seconds": seconds}})
    }

    #[test]
    fn the_seats_still_awaited_once_a_deal_waited_its_time_are_overdue_once() {
        let mut wait = SeedWait::default();
        assert!(
            wait.overdue(Some(&view("seeding", "c1", 0))).is_empty(),
            "the clock starts"
        );
        let overdue = wait.overdue(Some(&view("seeding", "c1", 0)));
        let keys: Vec<&str> = overdue.iter().map(|o| o.public_key.as_str()).collect();
        assert_eq!(keys, ["aa", "cc"], "not the seat that seeded");
        assert_eq!(
            overdue[0].reason,
            "fair_deal_seed_timeout: no seed for hand 2:0 within 0 s"
        );
        assert!(
            wait.overdue(Some(&view("seeding", "c2", 0))).is_empty(),
            "a new deal waits afresh"
        );
        assert!(
            wait.overdue(Some(&view("seeding", "c2", 60))).is_empty(),
            "within its time"
        );
        assert!(wait.overdue(Some(&view("dealt", "c2", 0))).is_empty());
        assert!(wait.overdue(None).is_empty());
        assert!(
            wait.overdue(Some(&json!({"fair_deal": {"status": "seeding"}})))
                .is_empty()
        );
    }
}
