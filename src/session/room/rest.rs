//! [`RoomControl`] over the community server: the blocking room loops call the async REST
//! client on the runtime they were started from.

use tokio::runtime::Handle;

use super::RoomControl;
use crate::api::group::{Group, MemberAdmitted, NewMember};
use crate::client::RestClient;

/// The server's control plane for one identity, callable from a blocking thread.
pub struct RestControl {
    client: RestClient,
    runtime: Handle,
}

impl RestControl {
    /// `runtime` must not be the current thread's (the calls block on it).
    pub fn new(client: RestClient, runtime: Handle) -> RestControl {
        RestControl { client, runtime }
    }
}

impl RoomControl for RestControl {
    fn group(&self, group_id: &str) -> Result<Group, String> {
        self.runtime
            .block_on(self.client.group(group_id))
            .map_err(|e| e.to_string())
    }

    fn admit(&self, group_id: &str, admission: &NewMember) -> Result<MemberAdmitted, String> {
        self.runtime
            .block_on(self.client.admit_member(group_id, admission))
            .map_err(|e| e.to_string())
    }
}
