//! Why a room refused an envelope, an action or a checkpoint: one variant per check, each
//! naming exactly what did not hold, so a member can say why it stopped trusting a leader
//! and a leader why it refused an input.

use super::delta::DeltaError;
use super::json::JsonLimit;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RoomError {
    #[error("the envelope is not an object of the room's wire format: {0}")]
    Malformed(String),
    #[error("the envelope is for {what} {got}, not {expected}")]
    Mismatch {
        what: &'static str,
        expected: String,
        got: String,
    },
    #[error("wire version {0} is not 2")]
    WireVersion(u64),
    #[error("the frame hash does not match the frame's core")]
    FrameHash,
    #[error("the events hash does not match the events")]
    EventsHash,
    #[error("the view hash does not match the envelope's private part")]
    ViewHash,
    #[error("the leader's signature does not verify")]
    Signature,
    #[error("frame {got} moves backwards from frame {have}")]
    Backwards { have: u64, got: u64 },
    #[error("frame {got} skips frames after {have}")]
    Gap { have: u64, got: u64 },
    #[error("frame {0} does not chain to the previous frame's hash")]
    Chain(u64),
    #[error("the first envelope of an epoch must be a bootstrap")]
    NotBootstrap,
    #[error("a bootstrap must carry the whole {0}")]
    BootstrapDelta(&'static str),
    #[error("a {0} delta has nothing to apply to")]
    NoBase(&'static str),
    #[error("the {what} delta cannot be applied: {error}")]
    Delta {
        what: &'static str,
        error: DeltaError,
    },
    #[error("the {0} travels in an invalid form")]
    Form(&'static str),
    #[error("the checkpoint's hash does not match its content")]
    CheckpointHash,
    #[error("the checkpoint does not certify this frame ({0} differs)")]
    CheckpointFrame(&'static str),
    #[error("the checkpoint's recovery state does not match the frame's recovery_state_hash")]
    RecoveryHash,
    #[error("the checkpoint's certificate does not verify")]
    Certificate,
    #[error("the checkpoint is invalid: {0}")]
    CheckpointState(String),
    #[error("the view does not match the frame's view_state_hash")]
    ViewState,
    #[error("a new epoch must be above {have}, got {got}")]
    EpochNotNewer { have: u64, got: u64 },
    #[error("{0}")]
    Json(#[from] JsonLimit),
}
