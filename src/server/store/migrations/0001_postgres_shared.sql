-- What several instances on one PostgreSQL database share beyond the tables of
-- 0001_schema.sql (part of migration 1 on PostgreSQL).

-- Rate limits shared by every instance: per subject (`key:HEX`, `address:ADDR`), the GCRA
-- "theoretical arrival time" (Unix microseconds) of its next request. Unlogged: counters
-- need no crash safety, and skipping the WAL keeps the per-request upsert cheap. A row
-- whose time has passed is fully replenished and deleted by housekeeping.
CREATE UNLOGGED TABLE IF NOT EXISTS rate_limits (
    subject TEXT PRIMARY KEY,
    tat BIGINT NOT NULL
);

-- Advanced (nextval) after every committed write that can change an offered-invitations
-- list; instances read it (last_value) before serving a cached list answer.
CREATE SEQUENCE IF NOT EXISTS offered_version;
