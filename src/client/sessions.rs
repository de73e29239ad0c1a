//! Session calls: the guest's registration of a match, reading, status and result.

use reqwest::Method;

use super::{ClientError, RestClient};
use crate::api::is_url_safe_id;
use crate::api::session::{
    NewSession, ResultReport, Session, SessionCreated, SessionStatus, StatusUpdate, Winner,
};

impl RestClient {
    /// `POST /sessions` (as the guest) → 201; the answer must be the locally computed id.
    pub async fn create_session(
        &self,
        session: &NewSession,
    ) -> Result<SessionCreated, ClientError> {
        let target = "/api/v1/sessions";
        let created: SessionCreated = self
            .call(Method::POST, target, Some(session), &[201])
            .await?
            .json(Method::POST, target)?;
        let expected = session.session_id();
        if created.session_id != expected {
            return Err(ClientError::BadResponse {
                method: Method::POST,
                target: target.into(),
                reason: format!(
                    "mismatched session_id: expected {expected}, got {}",
                    created.session_id
                ),
            });
        }
        Ok(created)
    }

    /// `GET /sessions/{id}`.
    pub async fn session(&self, session_id: &str) -> Result<Session, ClientError> {
        let target = session_target(session_id, "")?;
        self.call(Method::GET, &target, None::<&()>, &[200])
            .await?
            .json(Method::GET, &target)
    }

    /// `POST /sessions/{id}/status` (a participant ends a matched session), with this
    /// participant's `winner` when it names one: the server writes both in one
    /// transaction. A session that has already ended answers HTTP 409
    /// (`ClientError::status() == Some(409)`, code `session_ended`).
    pub async fn set_session_status(
        &self,
        session_id: &str,
        status: SessionStatus,
        winner: Option<Winner>,
    ) -> Result<Session, ClientError> {
        let target = session_target(session_id, "/status")?;
        let body = StatusUpdate { status, winner };
        self.call(Method::POST, &target, Some(&body), &[200])
            .await?
            .json(Method::POST, &target)
    }

    /// `POST /sessions/{id}/result`: this participant's report of who won.
    pub async fn report_result(
        &self,
        session_id: &str,
        winner: Winner,
    ) -> Result<Session, ClientError> {
        let target = session_target(session_id, "/result")?;
        let body = ResultReport { winner };
        self.call(Method::POST, &target, Some(&body), &[200])
            .await?
            .json(Method::POST, &target)
    }
}

fn session_target(session_id: &str, suffix: &str) -> Result<String, ClientError> {
    if !is_url_safe_id(session_id) {
        return Err(ClientError::InvalidId {
            what: "session id",
            value: session_id.to_string(),
        });
    }
    Ok(format!("/api/v1/sessions/{session_id}{suffix}"))
}
