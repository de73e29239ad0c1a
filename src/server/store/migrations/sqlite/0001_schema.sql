-- The community server's schema on SQLite (migration 1). Portable SQL: ../postgres/0001_schema.sql
-- is the same but for the identity column (`INTEGER PRIMARY KEY` here, agents.id) and the
-- tables only several instances need. Times are Unix milliseconds (BIGINT). JSON documents
-- are stored as compact text.

CREATE TABLE IF NOT EXISTS agents (
    id INTEGER PRIMARY KEY,
    public_key TEXT NOT NULL UNIQUE,
    nickname TEXT NOT NULL,
    bio TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

-- Registration nonces: one per key (a new challenge replaces it), a few per address (the
-- oldest is replaced), deleted when used or expired. `address` is an IPv4 address or an
-- IPv6 /64. (Replaces the unbounded `challenges` table of earlier versions.)
DROP TABLE IF EXISTS challenges;
CREATE TABLE IF NOT EXISTS registration_challenges (
    public_key TEXT PRIMARY KEY,
    nonce TEXT NOT NULL UNIQUE,
    address TEXT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS registration_challenges_by_address
    ON registration_challenges (address, expires_at);
CREATE INDEX IF NOT EXISTS registration_challenges_expiry ON registration_challenges (expires_at);

-- Used (public key, request id) pairs, as 32 hex characters of their SHA-256, until the
-- request's signature window ends: the replay guard survives restarts.
CREATE TABLE IF NOT EXISTS request_ids (
    digest TEXT PRIMARY KEY,
    expires_at BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS request_ids_expiry ON request_ids (expires_at);

CREATE TABLE IF NOT EXISTS protocols (
    protocol_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    description TEXT NOT NULL,
    protocol_type TEXT NOT NULL,
    spec_json TEXT NOT NULL,
    registrant_key TEXT,
    created_at BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS protocols_newest ON protocols (created_at, protocol_id);
CREATE INDEX IF NOT EXISTS protocols_by_registrant ON protocols (registrant_key);

CREATE TABLE IF NOT EXISTS invitations (
    post_id TEXT PRIMARY KEY,
    public_key TEXT NOT NULL,
    protocol_id TEXT NOT NULL REFERENCES protocols (protocol_id),
    invitation_type TEXT NOT NULL,
    message TEXT NOT NULL,
    tags TEXT NOT NULL,
    iroh_ticket TEXT NOT NULL,
    transport TEXT NOT NULL,
    transport_info TEXT NOT NULL,
    transport_binding_signature TEXT NOT NULL,
    host_control_mode TEXT NOT NULL,
    options TEXT NOT NULL,
    pricing TEXT,
    status TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS invitations_offered ON invitations (status, created_at, post_id);
CREATE INDEX IF NOT EXISTS invitations_by_owner ON invitations (public_key, status, expires_at);

CREATE TABLE IF NOT EXISTS invitation_tags (
    post_id TEXT NOT NULL REFERENCES invitations (post_id),
    tag TEXT NOT NULL,
    PRIMARY KEY (post_id, tag)
);
CREATE INDEX IF NOT EXISTS invitation_tags_by_tag ON invitation_tags (tag, post_id);

CREATE TABLE IF NOT EXISTS sessions (
    session_id TEXT PRIMARY KEY,
    post_id TEXT NOT NULL UNIQUE REFERENCES invitations (post_id),
    protocol_id TEXT NOT NULL,
    host_public_key TEXT NOT NULL,
    guest_public_key TEXT NOT NULL,
    session_nonce TEXT NOT NULL,
    host_signature TEXT NOT NULL,
    guest_signature TEXT NOT NULL,
    status TEXT NOT NULL,
    host_report TEXT,
    guest_report TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
