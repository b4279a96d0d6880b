package sqlstore

// grantMigration returns the statements of the migration that adds the
// grants of dispatch.GrantStore, for d: tables of their own, which no
// other migration touches.
//
// A grant is a row of the columns it is selected, ordered and spent by,
// with its JSON as made (record) beside them; the columns that change
// (used, revoked_by, revoked_at) are kept outside the JSON, so that a
// spend is one UPDATE of one row that compares and sets in its WHERE
// (used < uses, not revoked, not expired) and rewrites no JSON. A receipt
// is its sealed JSON, with its grant and time to list it by. Receipts
// are never deleted: they are the audit.
func grantMigration(d Dialect) []string {
	text := d.byteText()
	return []string{
		`CREATE TABLE {p}grants (
	id ` + text + ` PRIMARY KEY,
	principal ` + text + ` NOT NULL,
	tool ` + text + ` NOT NULL,
	contract_sha256 TEXT NOT NULL,
	created_at BIGINT NOT NULL,
	expires_at BIGINT NOT NULL,
	uses BIGINT NOT NULL,
	used BIGINT NOT NULL,
	revoked_by TEXT,
	revoked_at BIGINT,
	record TEXT NOT NULL
)`,
		// What a call about to suspend looks for: the grants of its
		// principal, tool and contract, oldest first.
		`CREATE INDEX {p}grants_by_scope ON {p}grants (principal, tool, contract_sha256, created_at, id)`,
		`CREATE INDEX {p}grants_by_time ON {p}grants (created_at, id)`,
		`CREATE TABLE {p}grant_receipts (
	id ` + text + ` PRIMARY KEY,
	grant_id ` + text + ` NOT NULL,
	receipt_at BIGINT NOT NULL,
	receipt TEXT NOT NULL
)`,
		`CREATE INDEX {p}grant_receipts_by_time ON {p}grant_receipts (receipt_at, id)`,
		`CREATE INDEX {p}grant_receipts_by_grant ON {p}grant_receipts (grant_id, receipt_at, id)`,
		`INSERT INTO {p}schema_version (version) VALUES (3)`,
	}
}
