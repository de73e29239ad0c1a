//! Who a side is, who decides its moves and who won: the [`Role`] an agent plays in a
//! session, its [`ControlMode`] (local only, never negotiated: announced to the peer for
//! display), and a game's [`Winner`].

/// Which side of a session an agent plays.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    serde::Serialize,
    serde::Deserialize,
    strum::Display,
    strum::EnumString,
    strum::IntoStaticStr,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Role {
    Host,
    Guest,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    pub fn peer(self) -> Role {
        match self {
            Role::Host => Role::Guest,
            Role::Guest => Role::Host,
        }
    }

    /// `host` or `guest`.
    pub fn parse(text: &str) -> Option<Role> {
        text.parse().ok()
    }
}

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
    strum::Display,
    strum::EnumString,
    strum::IntoStaticStr,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum ControlMode {
    Autonomous,
    #[default]
    Hybrid,
    Human,
}

impl ControlMode {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// The mode a string names, if any.
    pub fn parse(text: &str) -> Option<ControlMode> {
        text.parse().ok()
    }
}

/// Who won, as one party reports it.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::Display,
)]
#[strum(serialize_all = "snake_case")]
#[serde(rename_all = "lowercase")]
pub enum Winner {
    Host,
    Guest,
    Draw,
}

impl Winner {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    pub fn parse(text: &str) -> Option<Winner> {
        text.parse().ok()
    }
}

impl Winner {
    /// The side `role` names as the winner.
    pub fn of(role: Role) -> Winner {
        match role {
            Role::Host => Winner::Host,
            Role::Guest => Winner::Guest,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back_exactly() {
        for role in [Role::Host, Role::Guest] {
            assert_eq!(Role::parse(role.as_str()), Some(role));
            assert_eq!(role.to_string(), role.as_str());
        }
        for mode in [
            ControlMode::Autonomous,
            ControlMode::Hybrid,
            ControlMode::Human,
        ] {
            assert_eq!(ControlMode::parse(&mode.to_string()), Some(mode));
            assert_eq!(serde_json::to_value(mode).unwrap(), mode.as_str());
        }
        assert_eq!(Role::parse("Host"), None);
        assert_eq!(ControlMode::parse("robot"), None);
    }
}
