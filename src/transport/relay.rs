//! Which iroh relay servers a session endpoint uses: n0's public ones, none, or a custom one.
//!
//! Parsed from `"default"`, `"disabled"` or an `http(s)://` URL, as given on the command line
//! or in `AIGENORA_RELAY`, or from the relay a community server recommends. A custom relay
//! can be asked whether it is up ([`probe`]): a host relies on it to be reachable.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use iroh::RelayUrl;

use crate::api::meta::MAX_RELAY_URL_CHARS;

/// The environment variable the CLI reads a [`RelayChoice`] from.
pub const RELAY_ENV_VAR: &str = "AIGENORA_RELAY";

/// How an endpoint reaches peers it cannot dial directly.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum RelayChoice {
    /// n0's production relays plus n0 discovery, exactly like the reference client.
    #[default]
    Default,
    /// No relays and no discovery: only the direct addresses in the ticket (LAN, loopback,
    /// offline tests).
    Disabled,
    /// One self-hosted relay; no n0 discovery.
    Custom(RelayUrl),
}

/// A relay setting that is neither `default`, `disabled` nor an http(s) URL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid relay setting `{given}`: expected `default`, `disabled` or an http(s) URL ({reason})"
)]
pub struct RelayChoiceError {
    given: String,
    reason: String,
}

impl RelayChoice {
    /// Whether the endpoint talks to any relay server.
    pub fn uses_relays(&self) -> bool {
        !matches!(self, RelayChoice::Disabled)
    }

    /// The relay a community server recommends (`relay_url` of `GET /api/v1/version`), or
    /// n0's when it recommends none. Only an http(s) URL of bounded length is taken.
    pub fn recommended(url: Option<&str>) -> Result<RelayChoice, RelayChoiceError> {
        let Some(text) = url else {
            return Ok(RelayChoice::Default);
        };
        let refuse = |reason: &str| RelayChoiceError {
            given: text.chars().take(80).collect(),
            reason: format!("recommended by the server: {reason}"),
        };
        if text.chars().count() > MAX_RELAY_URL_CHARS {
            return Err(refuse(&format!(
                "longer than {MAX_RELAY_URL_CHARS} characters"
            )));
        }
        match text.parse::<RelayChoice>() {
            Ok(custom @ RelayChoice::Custom(_)) => Ok(custom),
            Ok(_) => Err(refuse("not a URL")),
            Err(error) => Err(refuse(&error.reason)),
        }
    }
}

/// How long one probe of a relay may take.
const PROBE_LIMIT: Duration = Duration::from_secs(5);

/// Asks the relay at `url` whether it is up (`GET /ping`, which every iroh relay answers),
/// within [`PROBE_LIMIT`]; why not, when it is not.
pub async fn probe(url: &RelayUrl) -> Result<(), String> {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .timeout(PROBE_LIMIT)
        .build()
        .map_err(|e| e.to_string())?;
    let ping = url.join("ping").map_err(|e| e.to_string())?;
    let response = client.get(ping).send().await.map_err(|error| {
        let mut reason = error.to_string();
        let mut source = std::error::Error::source(&error);
        while let Some(inner) = source {
            reason = inner.to_string();
            source = inner.source();
        }
        reason
    })?;
    match response.status() {
        status if status.is_success() => Ok(()),
        status => Err(format!("it answered HTTP {status}")),
    }
}

impl FromStr for RelayChoice {
    type Err = RelayChoiceError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let trimmed = text.trim();
        let error = |reason: &str| RelayChoiceError {
            given: text.to_string(),
            reason: reason.to_string(),
        };
        if trimmed.eq_ignore_ascii_case("default") {
            return Ok(RelayChoice::Default);
        }
        if trimmed.eq_ignore_ascii_case("disabled") {
            return Ok(RelayChoice::Disabled);
        }
        let url = RelayUrl::from_str(trimmed).map_err(|e| error(&e.to_string()))?;
        match url.scheme() {
            "http" | "https" if url.host_str().is_some() => Ok(RelayChoice::Custom(url)),
            "http" | "https" => Err(error("the URL has no host")),
            other => Err(error(&format!("unsupported scheme `{other}`"))),
        }
    }
}

impl fmt::Display for RelayChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RelayChoice::Default => f.write_str("default"),
            RelayChoice::Disabled => f.write_str("disabled"),
            RelayChoice::Custom(url) => write!(f, "{url}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_parse_case_insensitively() {
        assert_eq!("default".parse(), Ok(RelayChoice::Default));
        assert_eq!(" Disabled ".parse(), Ok(RelayChoice::Disabled));
    }

    #[test]
    fn a_url_becomes_a_custom_relay_and_displays_back() {
        let choice: RelayChoice = "https://relay.example.org".parse().unwrap();
        assert!(matches!(choice, RelayChoice::Custom(_)));
        // iroh makes relay hostnames absolute (trailing dot), as in the reference's tickets.
        assert_eq!(choice.to_string(), "https://relay.example.org./");
        assert_eq!(choice.to_string().parse::<RelayChoice>(), Ok(choice));
    }

    #[test]
    fn anything_else_is_rejected_with_the_given_text() {
        for bad in [
            "",
            "relay",
            "ftp://relay.example.org",
            "mailto:someone@example.org",
        ] {
            let error = bad.parse::<RelayChoice>().unwrap_err();
            assert!(error.to_string().contains(&format!("`{bad}`")), "{error}");
        }
    }

    #[test]
    fn a_recommendation_is_a_relay_url_or_nothing() {
        assert_eq!(RelayChoice::recommended(None), Ok(RelayChoice::Default));
        let choice = RelayChoice::recommended(Some("http://198.51.100.2:3340")).unwrap();
        assert_eq!(choice.to_string(), "http://198.51.100.2:3340/");
        for bad in ["disabled", "default", "ftp://relay.example.org", "relay"] {
            let error = RelayChoice::recommended(Some(bad)).unwrap_err();
            assert!(
                error.to_string().contains("recommended by the server"),
                "{error}"
            );
        }
        let long = format!("https://{}.example.org", "a".repeat(MAX_RELAY_URL_CHARS));
        let error = RelayChoice::recommended(Some(&long)).unwrap_err();
        assert!(error.to_string().contains("longer than"), "{error}");
        assert!(
            error.to_string().len() < 300,
            "the refusal quotes a bounded part"
        );
    }

    #[test]
    fn round_trips_keywords() {
        for choice in [RelayChoice::Default, RelayChoice::Disabled] {
            assert_eq!(choice.to_string().parse::<RelayChoice>(), Ok(choice));
        }
    }
}
