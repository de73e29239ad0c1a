//! Invitations: what a host posts, what browse and join read back, and the browse filter.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::identity::{self, Identity, SignatureError, TRANSPORT_IROH};

/// At most this many tags per invitation or browse filter.
pub const MAX_TAGS: usize = 10;
/// Longest tag.
pub const MAX_TAG_CHARS: usize = 64;

pub use crate::spec::{ControlMode, InvitationType};

/// `transport_info`: how to reach the host. `endpoint_id` is the host's agent key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransportInfo {
    pub version: u32,
    pub endpoint_id: String,
    pub ticket: String,
}

/// `POST /invitations` (the creator is the signing key; the body carries no public key).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewInvitation {
    #[serde(default)]
    pub message: String,
    #[serde(default)]
    pub tags: Vec<String>,
    pub iroh_ticket: String,
    #[serde(default = "iroh")]
    pub transport: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport_info: Option<TransportInfo>,
    pub transport_binding_signature: String,
    pub protocol_id: String,
    #[serde(default)]
    pub host_control_mode: ControlMode,
    #[serde(rename = "type", default)]
    pub invitation_type: InvitationType,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub options: Map<String, Value>,
}

fn iroh() -> String {
    TRANSPORT_IROH.to_string()
}

impl NewInvitation {
    /// An invitation for `ticket`, with `transport_info` and the binding signature made by
    /// `host` (what `host` posts). Adjust message, tags, type, mode and options after.
    pub fn signed(host: &Identity, protocol_id: &str, ticket: &str) -> NewInvitation {
        let binding = identity::transport_binding_canonical(
            host.public_key(),
            TRANSPORT_IROH,
            ticket,
            protocol_id,
        );
        NewInvitation {
            message: String::new(),
            tags: Vec::new(),
            iroh_ticket: ticket.to_string(),
            transport: iroh(),
            transport_info: Some(TransportInfo {
                version: 1,
                endpoint_id: host.public_key().to_string(),
                ticket: ticket.to_string(),
            }),
            transport_binding_signature: host.sign_hex(binding.as_bytes()),
            protocol_id: protocol_id.to_string(),
            host_control_mode: ControlMode::default(),
            invitation_type: InvitationType::default(),
            options: Map::new(),
        }
    }
}

/// `POST /invitations` → 201, and `POST /invitations/{id}/renew` → 200.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InvitationLease {
    pub post_id: String,
    #[serde(default)]
    pub status: String,
    #[serde(default)]
    pub expires_at: String,
}

/// `GET /invitations/{id}`: everything a guest needs to verify and dial the host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Invitation {
    pub post_id: String,
    pub public_key: String,
    pub protocol_id: String,
    #[serde(rename = "type", default)]
    pub invitation_type: InvitationType,
    #[serde(default)]
    pub message: String,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default)]
    pub status: String,
    #[serde(default)]
    pub host_control_mode: ControlMode,
    #[serde(default = "iroh")]
    pub transport: String,
    #[serde(default)]
    pub iroh_ticket: Option<String>,
    #[serde(default)]
    pub transport_info: Option<TransportInfo>,
    #[serde(default)]
    pub transport_binding_signature: Option<String>,
    #[serde(default)]
    pub options: Map<String, Value>,
    #[serde(default)]
    pub created_at: Option<String>,
    #[serde(default)]
    pub expires_at: Option<String>,
    #[serde(default)]
    pub registered: bool,
    #[serde(default)]
    pub nickname: Option<String>,
    #[serde(default)]
    pub agent_id: Option<i64>,
}

/// Why a guest must not dial an invitation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BindingError {
    #[error("unsupported transport {0:?} (only iroh)")]
    UnsupportedTransport(String),
    #[error("the invitation carries no iroh ticket")]
    NoTicket,
    #[error("the invitation carries no transport_binding_signature (possible MITM attack)")]
    Unsigned,
    #[error("transport binding signature: {0} (possible MITM attack)")]
    BadSignature(#[from] SignatureError),
}

impl Invitation {
    /// The ticket to dial: `transport_info.ticket` wins over `iroh_ticket` (as in the reference).
    pub fn ticket(&self) -> Option<&str> {
        let from_info = self
            .transport_info
            .as_ref()
            .map(|info| info.ticket.as_str());
        from_info
            .filter(|t| !t.is_empty())
            .or(self.iroh_ticket.as_deref())
            .filter(|t| !t.is_empty())
    }

    /// The guest's pre-dial check: iroh transport, a ticket, and the creator's binding
    /// signature over (creator key, iroh, ticket, protocol_id). Returns the ticket.
    pub fn verified_ticket(&self) -> Result<&str, BindingError> {
        if self.transport != TRANSPORT_IROH {
            return Err(BindingError::UnsupportedTransport(self.transport.clone()));
        }
        let ticket = self.ticket().ok_or(BindingError::NoTicket)?;
        let signature = self
            .transport_binding_signature
            .as_deref()
            .filter(|s| !s.is_empty());
        let signature = signature.ok_or(BindingError::Unsigned)?;
        let canonical = identity::transport_binding_canonical(
            &self.public_key,
            TRANSPORT_IROH,
            ticket,
            &self.protocol_id,
        );
        identity::verify_hex(&self.public_key, canonical.as_bytes(), signature)?;
        Ok(ticket)
    }
}

/// One item of `GET /invitations`: the detail without `transport_info` and full `options`,
/// plus `pricing` (= `options.pricing`) for display.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InvitationSummary {
    pub post_id: String,
    pub public_key: String,
    pub protocol_id: String,
    #[serde(rename = "type", default)]
    pub invitation_type: InvitationType,
    #[serde(default)]
    pub message: String,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default)]
    pub status: String,
    #[serde(default)]
    pub host_control_mode: ControlMode,
    #[serde(default)]
    pub iroh_ticket: Option<String>,
    #[serde(default)]
    pub pricing: Option<Value>,
    #[serde(default)]
    pub created_at: Option<String>,
    #[serde(default)]
    pub expires_at: Option<String>,
    #[serde(default)]
    pub registered: bool,
    #[serde(default)]
    pub nickname: Option<String>,
    #[serde(default)]
    pub agent_id: Option<i64>,
}

/// `GET /invitations` → offered (active, unexpired) invitations, newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InvitationList {
    pub results: Vec<InvitationSummary>,
    #[serde(default)]
    pub total: u64,
    #[serde(default)]
    pub next_cursor: Option<String>,
}

/// The browse filter, sent as a query in the reference's key order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BrowseFilter {
    pub protocol_id: Option<String>,
    pub invitation_type: Option<InvitationType>,
    pub tags: Vec<String>,
    pub limit: Option<u32>,
    pub cursor: Option<String>,
}

impl BrowseFilter {
    /// `?protocol_id=..&type=..&tags=a%2Cb&limit=..&cursor=..` with only the given keys.
    pub fn query(&self) -> String {
        let mut pairs = Vec::new();
        if let Some(id) = &self.protocol_id {
            pairs.push(("protocol_id", id.clone()));
        }
        if let Some(kind) = self.invitation_type {
            pairs.push(("type", kind.as_str().to_string()));
        }
        if !self.tags.is_empty() {
            pairs.push(("tags", self.tags.join(",")));
        }
        if let Some(limit) = self.limit {
            pairs.push(("limit", limit.to_string()));
        }
        if let Some(cursor) = &self.cursor {
            pairs.push(("cursor", cursor.clone()));
        }
        super::query_string(&pairs)
    }
}

/// Tag rule: 1 to 64 characters of `[A-Za-z0-9_.:-]`.
pub fn check_tag(tag: &str) -> Result<(), String> {
    let valid_chars = tag
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':' | b'-'));
    if tag.is_empty() || tag.len() > MAX_TAG_CHARS || !valid_chars {
        return Err(format!(
            "tag {tag:?} must be 1-{MAX_TAG_CHARS} characters of A-Za-z0-9_.:-"
        ));
    }
    Ok(())
}

/// Checks a tag list (count and each tag).
pub fn check_tags(tags: &[String]) -> Result<(), String> {
    if tags.len() > MAX_TAGS {
        return Err(format!("at most {MAX_TAGS} tags"));
    }
    tags.iter().try_for_each(|tag| check_tag(tag))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signed_invitation_serializes_in_the_reference_order_and_verifies() {
        let host = Identity::generate();
        let mut new = NewInvitation::signed(&host, &"a".repeat(64), "nodeabc");
        new.message = "Rock".into();
        new.tags = vec!["game".into()];
        let text = serde_json::to_string(&new).unwrap();
        let keys: Vec<&str> = [
            "message",
            "tags",
            "iroh_ticket",
            "transport",
            "transport_info",
            "transport_binding_signature",
            "protocol_id",
            "host_control_mode",
            "type",
        ]
        .to_vec();
        let positions: Vec<usize> = keys
            .iter()
            .map(|k| text.find(&format!("\"{k}\":")).unwrap())
            .collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]), "{text}");
        assert!(!text.contains("options"));

        let detail: Invitation = serde_json::from_value(serde_json::json!({
            "post_id": "p1", "public_key": host.public_key(), "protocol_id": new.protocol_id,
            "iroh_ticket": "nodeabc", "transport_binding_signature": new.transport_binding_signature,
        }))
        .unwrap();
        assert_eq!(detail.verified_ticket(), Ok("nodeabc"));
        let mut forged = detail.clone();
        forged.iroh_ticket = Some("nodeevil".into());
        assert!(matches!(
            forged.verified_ticket(),
            Err(BindingError::BadSignature(_))
        ));
    }

    #[test]
    fn browse_query_matches_the_reference_encoding() {
        let filter = BrowseFilter {
            protocol_id: Some("ab".into()),
            invitation_type: Some(InvitationType::Supply),
            tags: vec!["game".into(), "rps".into()],
            limit: Some(5),
            cursor: None,
        };
        assert_eq!(
            filter.query(),
            "?protocol_id=ab&type=supply&tags=game%2Crps&limit=5"
        );
        assert_eq!(BrowseFilter::default().query(), "");
    }

    #[test]
    fn tag_rules() {
        assert!(check_tag("a:b.c_d-1").is_ok());
        assert!(check_tag("").is_err());
        assert!(check_tag("a b").is_err());
        assert!(check_tags(&vec!["x".to_string(); 11]).is_err());
    }
}
