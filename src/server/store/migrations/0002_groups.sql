-- Migration 2: rooms (`/api/v1/groups`), in portable SQL for both backends. One room per
-- invitation; every integer is BIGINT (booleans as 0/1), times are Unix milliseconds.

CREATE TABLE IF NOT EXISTS groups (
    group_id TEXT PRIMARY KEY,
    post_id TEXT NOT NULL UNIQUE REFERENCES invitations (post_id),
    protocol_id TEXT NOT NULL,
    owner_key TEXT NOT NULL,
    min_participants BIGINT NOT NULL,
    max_participants BIGINT NOT NULL,
    allow_late_join BIGINT NOT NULL,
    recovery_mode TEXT NOT NULL,
    start_policy TEXT NOT NULL,
    status TEXT NOT NULL,
    leader_key TEXT NOT NULL,
    leader_epoch BIGINT NOT NULL,
    lease_expires_at BIGINT NOT NULL,
    iroh_ticket TEXT NOT NULL,
    transport_binding_signature TEXT NOT NULL,
    membership_version BIGINT NOT NULL,
    checkpoint_seq BIGINT NOT NULL,
    checkpoint_hash TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

-- Every key that ever held a seat in a room; `member_id` never changes.
CREATE TABLE IF NOT EXISTS group_members (
    group_id TEXT NOT NULL REFERENCES groups (group_id),
    public_key TEXT NOT NULL,
    member_id TEXT NOT NULL,
    seat BIGINT NOT NULL,
    status TEXT NOT NULL,
    join_nonce TEXT NOT NULL,
    joined_at BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL,
    PRIMARY KEY (group_id, public_key)
);

-- A safety net under the admission rules: one active member per seat.
CREATE UNIQUE INDEX IF NOT EXISTS group_members_active_seat
    ON group_members (group_id, seat) WHERE status = 'active';
