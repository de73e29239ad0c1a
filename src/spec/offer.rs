//! What an invitation offers: the spec's `type` and the invitation's, `supply`, `demand` or
//! `chat`.

/// What an invitation offers.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
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
pub enum InvitationType {
    #[default]
    Supply,
    Demand,
    Chat,
}

impl InvitationType {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    pub fn parse(text: &str) -> Option<InvitationType> {
        text.parse().ok()
    }
}
