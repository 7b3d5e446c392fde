-- webhook_add_lock.sql: keeps other adds out of webhook_endpoints until this transaction
-- ends (the mode conflicts with itself and with the row changes of an add, not with reads),
-- so that webhook_add.sql, a statement after this one, sees every endpoint added before it.
-- Without it two adds of one URL at once each found no other and both stored theirs.
LOCK TABLE webhook_endpoints IN SHARE ROW EXCLUSIVE MODE
