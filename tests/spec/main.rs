//! The spec contract and protocol runs in one process, and the module map of `src/`: `protocol hash`, `validate` and bad
//! input through our binary (and that such commands start without libpython), linting in CI (formats, the pre-commit hook, the GitHub
//! Action), the JSON Schema against the linter, `protocol diff`, the built-in protocols, our hooks for the well-known contracts
//! (and people playing its card games),
//! `protocol test` self-play (hero duel, injected faults), and the embedded Python SDK's own
//! suite.

#[path = "../support/mod.rs"]
mod support;

mod architecture;
mod bad_input;
mod builtin_protocols;
mod card_games;
mod diff;
mod hash;
mod hero_duel;
mod lint_ci;
mod mental_poker;
mod protocol_test;
mod python_sdk;
mod room_test;
mod runnable;
mod schema;
mod selfplay_faults;
mod startup;
mod validate;
mod well_known;
