//! Control modes: who makes this side's decisions (local only, never negotiated).

use std::fmt;
use std::str::FromStr;

/// `autonomous` (hooks decide alone), `hybrid` (hooks decide, a person may step in; the
/// default) or `human` (a person must decide each move).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    clap::ValueEnum,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum ControlMode {
    Autonomous,
    #[default]
    Hybrid,
    Human,
}

impl ControlMode {
    pub fn as_str(self) -> &'static str {
        match self {
            ControlMode::Autonomous => "autonomous",
            ControlMode::Hybrid => "hybrid",
            ControlMode::Human => "human",
        }
    }
}

impl ControlMode {
    /// The mode a string names, if any.
    pub fn parse(text: &str) -> Option<ControlMode> {
        text.parse().ok()
    }
}

impl fmt::Display for ControlMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ControlMode {
    type Err = String;

    fn from_str(text: &str) -> Result<ControlMode, String> {
        match text {
            "autonomous" => Ok(ControlMode::Autonomous),
            "hybrid" => Ok(ControlMode::Hybrid),
            "human" => Ok(ControlMode::Human),
            other => Err(format!(
                "unknown control mode {other:?} (autonomous, hybrid or human)"
            )),
        }
    }
}
