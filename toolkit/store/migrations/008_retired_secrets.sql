-- Credential rotation (issue 13): a workspace's JWT signing secret replaced by
-- `collab workspace rotate-secret` is kept here, still accepted for checking tokens it signed
-- until `accepted_until` (epoch ms); generate_token always signs with workspaces.jwt_secret.
CREATE TABLE retired_secrets (
    workspace_id      VARCHAR NOT NULL,
    jwt_secret        VARCHAR NOT NULL,
    retired_at        BIGINT NOT NULL,
    accepted_until    BIGINT NOT NULL
);
