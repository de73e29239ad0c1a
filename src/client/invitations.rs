//! Invitation calls: post, browse, read one, renew, cancel.

use reqwest::Method;

use super::{ClientError, RestClient};
use crate::api::invitation::{
    BrowseFilter, Invitation, InvitationLease, InvitationList, NewInvitation,
};
use crate::api::is_url_safe_id;

impl RestClient {
    /// `POST /invitations` → the new post id and its expiry (201).
    pub async fn create_invitation(
        &self,
        invitation: &NewInvitation,
    ) -> Result<InvitationLease, ClientError> {
        let target = "/api/v1/invitations";
        self.call(Method::POST, target, Some(invitation), &[201])
            .await?
            .json(Method::POST, target)
    }

    /// `GET /invitations?...` → offered invitations, newest first.
    pub async fn browse(&self, filter: &BrowseFilter) -> Result<InvitationList, ClientError> {
        let target = format!("/api/v1/invitations{}", filter.query());
        self.call(Method::GET, &target, None::<&()>, &[200])
            .await?
            .json(Method::GET, &target)
    }

    /// `GET /invitations/{post_id}` → the full invitation (check it with
    /// [`Invitation::verified_ticket`] before dialing).
    pub async fn invitation(&self, post_id: &str) -> Result<Invitation, ClientError> {
        let target = post_target(post_id, "")?;
        self.call(Method::GET, &target, None::<&()>, &[200])
            .await?
            .json(Method::GET, &target)
    }

    /// `POST /invitations/{post_id}/renew` with `{}` → the new expiry (owner only).
    pub async fn renew_invitation(&self, post_id: &str) -> Result<InvitationLease, ClientError> {
        let target = post_target(post_id, "/renew")?;
        let empty = serde_json::Map::new();
        self.call(Method::POST, &target, Some(&empty), &[200])
            .await?
            .json(Method::POST, &target)
    }

    /// `DELETE /invitations/{post_id}` (owner only; 204).
    pub async fn cancel_invitation(&self, post_id: &str) -> Result<(), ClientError> {
        let target = post_target(post_id, "")?;
        self.call(Method::DELETE, &target, None::<&()>, &[204])
            .await
            .map(drop)
    }
}

/// `/api/v1/invitations/{post_id}{suffix}`, refusing ids that would need encoding.
fn post_target(post_id: &str, suffix: &str) -> Result<String, ClientError> {
    if !is_url_safe_id(post_id) {
        return Err(ClientError::InvalidId {
            what: "post_id",
            value: post_id.to_string(),
        });
    }
    Ok(format!("/api/v1/invitations/{post_id}{suffix}"))
}
