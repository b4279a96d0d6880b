package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/errprefix"
)

// SchemaVersion is the version of the schema this code reads and writes:
// the number of migrations it knows. [Store.Migrate] brings a database up
// to it, and refuses a database whose schema is newer.
const SchemaVersion = 4

// migrations returns the statements of each migration for d, with the
// table prefix {p} still to be replaced: element n brings the schema from
// version n to version n+1 and records that it did.
//
// Design: times are BIGINT nanoseconds since 1970 UTC, exact on every
// dialect (PostgreSQL's timestamps keep microseconds only); a claim is
// kept as the JSON a dispatch.MemoryStore keeps (its outcome in a column
// of its own), with the columns it is looked up, ordered, expired and
// compared-and-set by beside it; a turn is a row with its times and
// version and one row per outcome, with the summary of a pending call in
// columns, so that Pending is one query that reads no outcome's JSON.
// Nothing is kept that package dispatch does not allow a Store to
// persist. The migration of a released version is never edited: a
// change is a new one.
func migrations(d Dialect) [][]string {
	return [][]string{migrationV1(d), migrationV2(d), grantMigration(d), eventMigration(d)}
}

// migrationV1 creates the claims and the turns.
func migrationV1(d Dialect) []string {
	bytes, text, ts := d.bytesType(), d.byteText(), d.timestampType()
	return []string{
		// Version 1.
		`CREATE TABLE {p}schema_version (
	version INTEGER PRIMARY KEY,
	applied_at ` + ts + ` NOT NULL DEFAULT CURRENT_TIMESTAMP
)`,
		`CREATE TABLE {p}claims (
	checkpoint_id ` + text + ` PRIMARY KEY,
	answer_sha256 TEXT NOT NULL,
	claimed_at BIGINT NOT NULL,
	expires_at BIGINT NOT NULL,
	claim TEXT NOT NULL,
	outcome TEXT
)`,
		`CREATE INDEX {p}claims_by_time ON {p}claims (claimed_at, checkpoint_id)`,
		`CREATE INDEX {p}claims_by_expiry ON {p}claims (expires_at)`,
		`CREATE TABLE {p}turns (
	id ` + bytes + ` PRIMARY KEY,
	first_saved_at BIGINT NOT NULL,
	saved_at BIGINT NOT NULL,
	expires_at BIGINT NOT NULL
)`,
		`CREATE INDEX {p}turns_by_time ON {p}turns (first_saved_at, id)`,
		`CREATE INDEX {p}turns_by_expiry ON {p}turns (expires_at)`,
		`CREATE TABLE {p}turn_outcomes (
	turn_id ` + bytes + ` NOT NULL,
	position INTEGER NOT NULL,
	checkpoint_id ` + text + `,
	outcome TEXT NOT NULL,
	PRIMARY KEY (turn_id, position)
)`,
		`CREATE INDEX {p}turn_outcomes_by_checkpoint ON {p}turn_outcomes (checkpoint_id)`,
		`INSERT INTO {p}schema_version (version) VALUES (1)`,
	}
}

// migrationV2 adds the call record's life, turns saved at a version and
// the summary of a pending call.
func migrationV2(d Dialect) []string {
	return []string{
		// Version 2: the call record's life, turns saved at a version,
		// and the summaries a list of pending calls reads.
		//
		// A claim keeps its state, version and lease end in columns
		// beside its JSON (which holds them too): version for the
		// compare and set of Advance and Finish, lease_expires for
		// Stranded. A row of version 1 has them NULL and reads as its
		// JSON always did (no state: finished with an outcome, running
		// with a lease long ended without one; version 0).
		`ALTER TABLE {p}claims ADD COLUMN state TEXT`,
		`ALTER TABLE {p}claims ADD COLUMN version BIGINT`,
		`ALTER TABLE {p}claims ADD COLUMN lease_expires BIGINT`,
		// The records not finished (claimed or running: those without
		// an outcome), in the order Stranded lists them, with the lease
		// end to filter on in the index itself: Stranded reads this
		// index, and the JSON of the rows it returns only.
		`CREATE INDEX {p}claims_open ON {p}claims (claimed_at, checkpoint_id, lease_expires) WHERE outcome IS NULL`,
		// A turn saved by version 1 was saved once at least: version 1.
		`ALTER TABLE {p}turns ADD COLUMN version BIGINT NOT NULL DEFAULT 1`,
		// The summary of a pending call (dispatch.NewPending), written
		// by SaveTurn, so that a list page reads these columns and not
		// each outcome's JSON. NULL in rows of version 1, whose summary
		// is made from the outcome.
		`ALTER TABLE {p}turn_outcomes ADD COLUMN call_id TEXT`,
		`ALTER TABLE {p}turn_outcomes ADD COLUMN tool TEXT`,
		`ALTER TABLE {p}turn_outcomes ADD COLUMN principal TEXT`,
		`ALTER TABLE {p}turn_outcomes ADD COLUMN prompt TEXT`,
		`ALTER TABLE {p}turn_outcomes ADD COLUMN issued_at BIGINT`,
		`ALTER TABLE {p}turn_outcomes ADD COLUMN checkpoint_expires_at BIGINT`,
		`INSERT INTO {p}schema_version (version) VALUES (2)`,
	}
}

// eventMigration, version 4, creates the scopes' event logs.
func eventMigration(d Dialect) []string {
	bytes := d.bytesType()
	return []string{
		// Version 4: the scopes' event logs (dispatch.EventStore), in
		// tables of their own.
		//
		// A scope's row is the lock its decisions take (ReserveEvent
		// upserts it first), kept until its latest event is. Scope and ID
		// are bytes: any UTF-8 the runtime chose, NUL included.
		`CREATE TABLE {p}scopes (
	scope ` + bytes + ` PRIMARY KEY,
	keep_until BIGINT NOT NULL
)`,
		`CREATE INDEX {p}scopes_by_expiry ON {p}scopes (keep_until)`,
		// One row an event: its arguments as canonical JSON text, its
		// state (reserved, kept, released) and its outcome once known.
		// A decision reads the events of a scope's tools in a window:
		// the index on (scope, tool, at).
		`CREATE TABLE {p}scope_events (
	scope ` + bytes + ` NOT NULL,
	id ` + bytes + ` NOT NULL,
	tool TEXT NOT NULL,
	at BIGINT NOT NULL,
	keep_until BIGINT NOT NULL,
	arguments TEXT NOT NULL,
	state TEXT NOT NULL,
	outcome TEXT,
	PRIMARY KEY (scope, id)
)`,
		`CREATE INDEX {p}scope_events_by_tool ON {p}scope_events (scope, tool, at)`,
		`CREATE INDEX {p}scope_events_by_expiry ON {p}scope_events (keep_until)`,
		`INSERT INTO {p}schema_version (version) VALUES (4)`,
	}
}

// Migrations returns the SQL [Store.Migrate] runs on a database of
// dialect d, for review or to apply by hand: element n is the script
// (statements ending in ";") that brings the schema from version n to
// version n+1 and records the new version in the table
// tool_schema_version. The names are those of the [DefaultTablePrefix];
// with another [Config].TablePrefix, every name starts with it instead of
// "tool_". Migrate also takes a lock around them, which these scripts
// leave out.
//
// The slice is new on each call; it is nil for an unknown dialect.
func Migrations(d Dialect) []string {
	if !d.known() {
		return nil
	}
	var out []string
	for _, m := range migrations(d) {
		var b strings.Builder
		for _, stmt := range m {
			b.WriteString(d.sql(DefaultTablePrefix, stmt))
			b.WriteString(";\n")
		}
		out = append(out, b.String())
	}
	return out
}

// Migrate brings the database's schema up to [SchemaVersion], applying the
// migrations it lacks in one transaction, and does nothing when it is up
// to date. Every replica may call it at start: on PostgreSQL the
// transaction first takes an advisory lock (pg_advisory_xact_lock) named
// after the table prefix, on SQLite it is an IMMEDIATE transaction, so
// replicas that migrate at once migrate one after the other and the
// second finds nothing to do.
//
// A database whose schema is newer than SchemaVersion (written by a newer
// release of this module) is refused with an error wrapping
// [dispatch.ErrStore], and left unchanged: upgrade this module instead.
// Every other error wraps [dispatch.ErrStore] too, beside the driver's
// error or ctx's; a failed Migrate changes nothing.
func (s *Store) Migrate(ctx context.Context) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	err := s.inTx(ctx, func(q querier) error {
		if s.dialect == PostgreSQL {
			if _, err := q.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", s.lockKey()); err != nil {
				return s.fail(ctx, "locking for migration", err)
			}
		}
		version, err := s.schemaVersion(ctx, q)
		if err != nil {
			return err
		}
		if version > SchemaVersion {
			return errprefix.Errorf("%w: the database's schema (tables %s*) is version %d, newer than version %d that this release of sqlstore knows; upgrade github.com/agentcontract/tool/stores/sqlstore", dispatch.ErrStore, s.prefix, version, SchemaVersion)
		}
		for n, m := range migrations(s.dialect)[version:] {
			for _, stmt := range m {
				if _, err := q.ExecContext(ctx, s.dialect.sql(s.prefix, stmt)); err != nil {
					return s.fail(ctx, fmt.Sprintf("migrating the schema to version %d", version+n+1), err)
				}
			}
		}
		return nil
	})
	return err
}

// schemaVersion reads the schema's version: 0 when it has no version
// table.
func (s *Store) schemaVersion(ctx context.Context, q querier) (int, error) {
	var exists bool
	var err error
	table := s.prefix + "schema_version"
	switch s.dialect {
	case PostgreSQL:
		err = q.QueryRowContext(ctx, "SELECT to_regclass($1) IS NOT NULL", table).Scan(&exists)
	default:
		err = q.QueryRowContext(ctx, "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = ?", table).Scan(&exists)
	}
	if err != nil {
		return 0, s.fail(ctx, "looking for the schema version table", err)
	}
	if !exists {
		return 0, nil
	}
	var version sql.NullInt64
	if err := q.QueryRowContext(ctx, s.dialect.sql(s.prefix, "SELECT max(version) FROM {p}schema_version")).Scan(&version); err != nil {
		return 0, s.fail(ctx, "reading the schema version", err)
	}
	return int(version.Int64), nil
}

// lockKey is the key of the PostgreSQL advisory lock Migrate takes: a
// hash of this module's path and the table prefix, so that stores with
// different prefixes migrate independently.
func (s *Store) lockKey() int64 {
	h := fnv.New64a()
	h.Write([]byte("github.com/agentcontract/tool/stores/sqlstore migrate " + s.prefix))
	return int64(h.Sum64())
}
