//! `GET /auth/challenge` and `POST /auth/register`: a key proves work on a single-use
//! nonce (5 min; one per key, a few per address), signs `nonce:public_key:nickname`, and
//! becomes a registered agent.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::{Extension, Json};
use rand::RngCore;

use crate::api::agent::{Agent, Challenge, Registration, check_bio, check_nickname};
use crate::identity;
use crate::server::AppState;
use crate::server::clock::{iso8601, now_ms};
use crate::server::config::CHALLENGE_TTL;
use crate::server::error::{ApiError, ApiResult, parse_body};
use crate::server::rate_limit::{AddressKey, ClientAddr};
use crate::server::replay::WriteReceipt;
use crate::server::signature::Caller;
use crate::server::store::{NewAgent, NewChallenge, RegisterOutcome};

/// A fresh nonce for the caller; it replaces the caller's previous one, and the oldest of
/// its address's when the address has too many outstanding.
pub async fn challenge(
    State(state): State<Arc<AppState>>,
    Caller(caller): Caller,
    Extension(ClientAddr(addr)): Extension<ClientAddr>,
) -> ApiResult<Json<Challenge>> {
    let mut bytes = [0u8; 16];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    let nonce = hex::encode(bytes);
    let now = now_ms();
    let expires_at = now + CHALLENGE_TTL.as_millis() as i64;
    let address = AddressKey::of(addr.ip()).to_string();
    let challenge = NewChallenge {
        nonce: &nonce,
        public_key: &caller,
        address: &address,
        expires_at,
    };
    state
        .store
        .insert_challenge(&challenge, state.limits.quotas.challenges_per_address, now)
        .await?;
    Ok(Json(Challenge {
        nonce,
        difficulty: state.limits.pow_difficulty,
        expires_at: Some(iso8601(expires_at)),
    }))
}

pub async fn register(
    State(state): State<Arc<AppState>>,
    Caller(caller): Caller,
    receipt: WriteReceipt,
    body: Bytes,
) -> ApiResult<(StatusCode, Json<Agent>)> {
    let registration: Registration = parse_body(&body)?;
    if registration.public_key.to_ascii_lowercase() != caller {
        return Err(ApiError::bad_request(
            "key_mismatch",
            "public_key must be the signing key (X-Public-Key)",
        ));
    }
    check_nickname(&registration.nickname)
        .map_err(|m| ApiError::bad_request("invalid_nickname", m))?;
    check_bio(&registration.bio).map_err(|m| ApiError::bad_request("invalid_bio", m))?;
    let difficulty = state.limits.pow_difficulty;
    if !identity::pow_satisfied(
        &registration.nonce,
        &registration.public_key,
        registration.counter,
        difficulty,
    ) {
        return Err(ApiError::bad_request(
            "invalid_proof_of_work",
            format!("the proof of work does not have {difficulty} leading zero bytes"),
        ));
    }
    let proof = identity::registration_canonical(
        &registration.nonce,
        &registration.public_key,
        &registration.nickname,
    );
    identity::verify_hex(&caller, proof.as_bytes(), &registration.signature).map_err(|e| {
        ApiError::bad_request(
            "invalid_registration_signature",
            format!("registration signature: {e}"),
        )
    })?;
    let agent = NewAgent {
        nonce: &registration.nonce,
        public_key: &caller,
        nickname: &registration.nickname,
        bio: &registration.bio,
    };
    let outcome = state
        .store
        .register_agent(&agent, Some(&receipt), now_ms())
        .await?;
    match outcome {
        RegisterOutcome::Registered(agent) => Ok((StatusCode::CREATED, Json(agent))),
        RegisterOutcome::AlreadyRegistered => Err(ApiError::conflict(
            "already_registered",
            "this public key is already registered",
        )),
        RegisterOutcome::UnknownNonce => Err(ApiError::bad_request(
            "invalid_nonce",
            "unknown, used or expired nonce; request a new challenge",
        )),
    }
}
