//! The transport binding: the invitation creator's signature tying its identity to the
//! iroh ticket and protocol it advertises (docs/rest-api.md#invitation-binding).

/// The only transport the network defines.
pub const TRANSPORT_IROH: &str = "iroh";

/// Four `\n`-joined lines, no trailing newline; a missing protocol id is the empty string.
pub fn transport_binding_canonical(
    public_key: &str,
    transport: &str,
    ticket: &str,
    protocol_id: &str,
) -> String {
    format!(
        "public_key:{public_key}\ntransport:{transport}\niroh_ticket:{ticket}\nprotocol_id:{protocol_id}"
    )
}

#[cfg(test)]
mod tests {
    use super::super::vectors::*;
    use super::super::{Identity, verify_hex};
    use super::*;

    const TICKET: &str = "nodeaaavkt5t57fqgjbiz6pjkxbl6xuye23t7kol2cdujt7xakdg5sxpwajdnb2hi4dthixs65ltmuys2mjoojswyylzfzuxe33ifzxgk5dxn5zgwlrpaeamaaacak73may";
    const PROTOCOL: &str = "43a806481a8e8cd00bc89f4676756c9be9081c0dd8392bee8e3534da41daa55f";
    const SIGNATURE: &str = "131b19d9f954e2d18909f415fe1a18da2a5e4515ec2e99e86019cebc2d64dde6\
                             8d6aa1fb1f84d6d6717de47345069b562129bd6623c88bf49fc7a439f93f980a";

    #[test]
    fn reproduces_the_captured_binding_signature() {
        let canonical = transport_binding_canonical(ALICE_PUBLIC, TRANSPORT_IROH, TICKET, PROTOCOL);
        assert_eq!(
            canonical,
            format!(
                "public_key:{ALICE_PUBLIC}\ntransport:iroh\niroh_ticket:{TICKET}\nprotocol_id:{PROTOCOL}"
            )
        );
        let alice = Identity::from_seed_hex(ALICE_SEED).unwrap();
        assert_eq!(alice.sign_hex(canonical.as_bytes()), SIGNATURE);
        assert_eq!(
            verify_hex(ALICE_PUBLIC, canonical.as_bytes(), SIGNATURE),
            Ok(())
        );
    }
}
