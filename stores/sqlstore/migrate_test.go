package sqlstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/stores/sqlstore"
)

// versions reads the rows of the schema version table.
func versions(t *testing.T, db *sql.DB, prefix string) []int {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), "SELECT version FROM "+prefix+"schema_version ORDER BY version")
	require.NoError(t, err)
	defer rows.Close()
	var out []int
	for rows.Next() {
		var v int
		require.NoError(t, rows.Scan(&v))
		out = append(out, v)
	}
	require.NoError(t, rows.Err())
	return out
}

// allVersions is every schema version, 1 to SchemaVersion: what a
// database migrated by this release records.
func allVersions() []int {
	var out []int
	for v := 1; v <= sqlstore.SchemaVersion; v++ {
		out = append(out, v)
	}
	return out
}

func TestMigrate(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			d := b.new(t)
			db := d.open(t)
			s, err := sqlstore.New(db, sqlstore.Config{Dialect: d.dialect})
			require.NoError(t, err)

			// Before Migrate there are no tables: fail closed.
			_, err = s.Claim(ctx, claim(1, 1))
			require.ErrorIs(t, err, dispatch.ErrStore, "a claim on a database that was not migrated")

			require.NoError(t, s.Migrate(ctx), "a fresh database")
			require.Equal(t, allVersions(), versions(t, db, "tool_"))
			_, err = s.Claim(ctx, claim(1, 1))
			require.NoError(t, err)

			require.NoError(t, s.Migrate(ctx), "migrating again does nothing")
			require.Equal(t, allVersions(), versions(t, db, "tool_"))
			_, err = s.Claimed(ctx, hexN(1, 32))
			require.NoError(t, err, "migrating again keeps the records")

			// A newer release migrated this database: refused, unchanged.
			newer := sqlstore.SchemaVersion + 1
			_, err = db.ExecContext(ctx, fmt.Sprintf("INSERT INTO tool_schema_version (version) VALUES (%d)", newer))
			require.NoError(t, err)
			err = s.Migrate(ctx)
			require.ErrorIs(t, err, dispatch.ErrStore)
			require.EqualError(t, err, fmt.Sprintf("tool: claim store failed: the database's schema (tables tool_*) is version %d, newer than version %d that this release of sqlstore knows; upgrade github.com/agentcontract/tool/stores/sqlstore", newer, sqlstore.SchemaVersion))
			require.Equal(t, append(allVersions(), newer), versions(t, db, "tool_"))
		})
	}
}

// Replicas that start together migrate one after the other: every
// Migrate succeeds and the schema is migrated once.
func TestMigrateConcurrently(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			d := b.new(t)
			const replicas = 6
			var stores []*sqlstore.Store
			for range replicas {
				s, err := sqlstore.New(d.open(t), sqlstore.Config{Dialect: d.dialect, TablePrefix: "app_"})
				require.NoError(t, err)
				stores = append(stores, s)
			}
			start := make(chan struct{})
			errs := make([]error, replicas)
			var wg sync.WaitGroup
			for i, s := range stores {
				wg.Go(func() {
					<-start
					errs[i] = s.Migrate(t.Context())
				})
			}
			close(start)
			wg.Wait()
			for i, err := range errs {
				require.NoError(t, err, "replica %d", i)
			}
			require.Equal(t, allVersions(), versions(t, d.open(t), "app_"))
		})
	}
}

// A cancelled Migrate changes nothing; the next one migrates.
func TestMigrateCanceled(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			d := b.new(t)
			db := d.open(t)
			s, err := sqlstore.New(db, sqlstore.Config{Dialect: d.dialect})
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			err = s.Migrate(ctx)
			require.ErrorIs(t, err, dispatch.ErrStore)
			require.ErrorIs(t, err, context.Canceled)
			require.NoError(t, s.Migrate(t.Context()))
			require.Equal(t, allVersions(), versions(t, db, "tool_"))
		})
	}
}

// Migrations shows the SQL of each dialect, one script per version.
func TestMigrations(t *testing.T) {
	for _, d := range []sqlstore.Dialect{sqlstore.PostgreSQL, sqlstore.SQLite} {
		m := sqlstore.Migrations(d)
		require.Len(t, m, sqlstore.SchemaVersion, d.String())
		require.Contains(t, m[0], "CREATE TABLE tool_claims (")
		require.Contains(t, m[0], "INSERT INTO tool_schema_version (version) VALUES (1);")
		require.NotContains(t, m[0], "{p}")
		require.Contains(t, m[1], "ALTER TABLE tool_claims ADD COLUMN version BIGINT;")
		require.Contains(t, m[1], "CREATE INDEX tool_claims_open ON tool_claims (claimed_at, checkpoint_id, lease_expires) WHERE outcome IS NULL;")
		require.Contains(t, m[1], "ALTER TABLE tool_turns ADD COLUMN version BIGINT NOT NULL DEFAULT 1;")
		require.True(t, strings.HasSuffix(m[1], "INSERT INTO tool_schema_version (version) VALUES (2);\n"))
		require.NotContains(t, m[1], "{p}")
		m[0] = "changed"
		require.NotEqual(t, "changed", sqlstore.Migrations(d)[0], "each call returns a new slice")
	}
	require.Contains(t, sqlstore.Migrations(sqlstore.PostgreSQL)[0], "BYTEA")
	require.Contains(t, sqlstore.Migrations(sqlstore.SQLite)[0], "BLOB")
	require.Nil(t, sqlstore.Migrations(0))
	require.Nil(t, sqlstore.Migrations(3))
	require.True(t, strings.HasSuffix(sqlstore.Migrations(sqlstore.SQLite)[0], ";\n"))
}
