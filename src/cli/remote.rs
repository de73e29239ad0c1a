//! What every command that talks to the community server needs: the data directory, the
//! identity in it, a signed client of the chosen server, and a runtime to drive it.

use std::future::Future;

use anyhow::Context;

use super::GlobalArgs;
use crate::client::RestClient;
use crate::config;
use crate::identity;
use crate::layout::DataDir;

/// A signed client acting as the data directory's identity.
pub struct Remote {
    pub data_dir: DataDir,
    pub client: RestClient,
    runtime: tokio::runtime::Runtime,
}

impl Remote {
    pub fn connect(global: &GlobalArgs) -> anyhow::Result<Remote> {
        let data_dir = global.data_dir();
        let identity = identity::load_key_file(&data_dir)?;
        let server = config::resolve_server(global.server.as_deref(), &data_dir)?;
        let client = RestClient::new(&server, identity)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("cannot start the async runtime")?;
        Ok(Remote {
            data_dir,
            client,
            runtime,
        })
    }

    /// Runs one async call to completion.
    pub fn run<F: Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }
}

/// Prints a value as one line of JSON (what `--json` prints), terminal-safe.
pub fn print_json(value: &impl serde::Serialize) {
    println!("{}", crate::terminal::json_line(value));
}
