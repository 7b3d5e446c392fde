-- token_revoke.sql: revokes the API token with id $1 if it is active. Returns one row:
-- found (a token with that id exists) and revoked (this statement revoked it), so that the
-- caller can tell an unknown id from a token that was already revoked.
WITH existing AS (
    SELECT id
    FROM api_tokens
    WHERE id = $1
), updated AS (
    UPDATE api_tokens
    SET revoked_at = now()
    WHERE id = $1 AND revoked_at IS NULL
    RETURNING id
)
SELECT EXISTS (SELECT 1 FROM existing) AS found,
       EXISTS (SELECT 1 FROM updated) AS revoked
