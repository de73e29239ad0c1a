//! Where things are: which data directory and which community server a command uses.
//!
//! Data directory: `--data-dir` > `AIGENORA_DATA_DIR` > `P2P_DATA_DIR` > `AGENT_DIR` >
//! `./.aigenora`. Server URL: `--server` > `AIGENORA_SERVER` > `P2P_SERVER` > `"server"` in
//! `<data_dir>/config.json` > [`DEFAULT_SERVER`]. A trailing `/` is dropped from the URL.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::layout::DataDir;

/// The server a fresh install talks to: a local `aigenora server`.
pub const DEFAULT_SERVER: &str = "http://127.0.0.1:41000";
/// Environment variables naming the data directory, strongest first.
pub const DATA_DIR_ENV: [&str; 3] = ["AIGENORA_DATA_DIR", "P2P_DATA_DIR", "AGENT_DIR"];
/// Environment variables naming the server, strongest first.
pub const SERVER_ENV: [&str; 2] = ["AIGENORA_SERVER", "P2P_SERVER"];

/// A settings file that exists but cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("invalid settings file {path}: {reason}")]
pub struct ConfigError {
    pub path: String,
    pub reason: String,
}

/// The data directory from the flag, the environment, or `./.aigenora`.
pub fn resolve_data_dir(flag: Option<&Path>) -> DataDir {
    DataDir::new(data_dir_from(flag, |name| std::env::var(name).ok()))
}

/// The server URL from the flag, the environment, the data dir's config.json, or the default.
pub fn resolve_server(flag: Option<&str>, data_dir: &DataDir) -> Result<String, ConfigError> {
    server_from(flag, data_dir, |name| std::env::var(name).ok())
}

fn data_dir_from(flag: Option<&Path>, env: impl Fn(&str) -> Option<String>) -> PathBuf {
    if let Some(dir) = flag {
        return dir.to_path_buf();
    }
    DATA_DIR_ENV
        .iter()
        .find_map(|name| env(name).filter(|value| !value.is_empty()))
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(".aigenora"))
}

fn server_from(
    flag: Option<&str>,
    data_dir: &DataDir,
    env: impl Fn(&str) -> Option<String>,
) -> Result<String, ConfigError> {
    let chosen = match flag.filter(|value| !value.is_empty()) {
        Some(url) => url.to_string(),
        None => match SERVER_ENV
            .iter()
            .find_map(|name| env(name).filter(|value| !value.is_empty()))
        {
            Some(url) => url,
            None => configured_server(data_dir)?.unwrap_or_else(|| DEFAULT_SERVER.to_string()),
        },
    };
    Ok(chosen.trim_end_matches('/').to_string())
}

/// The `"server"` entry of `<data_dir>/config.json`, if the file exists and sets one.
fn configured_server(data_dir: &DataDir) -> Result<Option<String>, ConfigError> {
    let path = data_dir.config_file();
    let error = |reason: String| ConfigError {
        path: path.display().to_string(),
        reason,
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(error(e.to_string())),
    };
    let document: Value =
        serde_json::from_str(&text).map_err(|e| error(format!("not JSON: {e}")))?;
    match document.get("server") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(url)) if !url.is_empty() => Ok(Some(url.clone())),
        Some(_) => Err(error("\"server\" must be a non-empty string".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| value.to_string())
        }
    }

    #[test]
    fn data_dir_precedence() {
        let all = env_of(&[
            ("AIGENORA_DATA_DIR", "a"),
            ("P2P_DATA_DIR", "p"),
            ("AGENT_DIR", "g"),
        ]);
        assert_eq!(
            data_dir_from(Some(Path::new("flag")), &all),
            PathBuf::from("flag")
        );
        assert_eq!(data_dir_from(None, &all), PathBuf::from("a"));
        assert_eq!(
            data_dir_from(None, env_of(&[("P2P_DATA_DIR", "p"), ("AGENT_DIR", "g")])),
            PathBuf::from("p")
        );
        assert_eq!(
            data_dir_from(None, env_of(&[("AGENT_DIR", "g")])),
            PathBuf::from("g")
        );
        assert_eq!(data_dir_from(None, env_of(&[])), PathBuf::from(".aigenora"));
    }

    #[test]
    fn server_precedence_and_config_file() {
        let temp = tempfile::tempdir().unwrap();
        let dir = DataDir::new(temp.path());
        let none = env_of(&[]);
        assert_eq!(server_from(None, &dir, &none).unwrap(), DEFAULT_SERVER);
        std::fs::write(dir.config_file(), r#"{"server":"http://conf:1/"}"#).unwrap();
        assert_eq!(server_from(None, &dir, &none).unwrap(), "http://conf:1");
        let p2p = env_of(&[("P2P_SERVER", "http://p2p:2")]);
        assert_eq!(server_from(None, &dir, &p2p).unwrap(), "http://p2p:2");
        let both = env_of(&[
            ("P2P_SERVER", "http://p2p:2"),
            ("AIGENORA_SERVER", "http://ours:3"),
        ]);
        assert_eq!(server_from(None, &dir, &both).unwrap(), "http://ours:3");
        assert_eq!(
            server_from(Some("http://flag:4//"), &dir, &both).unwrap(),
            "http://flag:4"
        );
        std::fs::write(dir.config_file(), r#"{"server":5}"#).unwrap();
        assert!(
            server_from(None, &dir, &none)
                .unwrap_err()
                .to_string()
                .contains("\"server\" must be")
        );
    }
}
