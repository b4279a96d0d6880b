package sqlstore

import (
	"strconv"
	"strings"
)

// Dialect names the SQL database a Store talks to. It chooses the SQL the
// Store writes, never a driver: the program imports the driver it opens
// its *sql.DB with, so a PostgreSQL program compiles no SQLite and the
// other way round.
//
// The zero Dialect is no dialect: [New] refuses it.
type Dialect int

// The dialects a Store speaks.
const (
	// PostgreSQL: PostgreSQL 12 or later, through any database/sql driver
	// (pgx's stdlib package, lib/pq). The store's tables live in the first
	// schema of the connection's search_path.
	PostgreSQL Dialect = iota + 1
	// SQLite: SQLite 3.35 or later, through any database/sql driver
	// (modernc.org/sqlite, mattn/go-sqlite3), on a database file. Open it
	// with a busy timeout (modernc.org/sqlite:
	// "file.db?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)"):
	// without one, a write that meets another waits for nothing and fails
	// with an error wrapping [dispatch.ErrStore]. SQLite keeps the journal
	// mode in the file: switch a new file to WAL once, before a pool opens
	// many connections on it, since the switch takes a lock that
	// connections opening at the same moment may each be refused.
	SQLite
)

// String returns "PostgreSQL", "SQLite", or "Dialect(n)" for any other
// value.
func (d Dialect) String() string {
	switch d {
	case PostgreSQL:
		return "PostgreSQL"
	case SQLite:
		return "SQLite"
	}
	return "Dialect(" + strconv.Itoa(int(d)) + ")"
}

// known reports whether d is one of the dialects above.
func (d Dialect) known() bool { return d == PostgreSQL || d == SQLite }

// sql rewrites a statement written with ? placeholders and {p} for the
// table prefix into d's form: $1, $2, … for PostgreSQL. No statement of
// this package has a ? inside a literal.
func (d Dialect) sql(prefix, query string) string {
	query = strings.ReplaceAll(query, "{p}", prefix)
	if d != PostgreSQL {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// The types of the columns that differ between dialects: raw bytes, and
// text compared byte by byte (so that ORDER BY agrees with Go's string
// order on every server, whatever its collation).
func (d Dialect) bytesType() string {
	if d == PostgreSQL {
		return "BYTEA"
	}
	return "BLOB"
}

func (d Dialect) byteText() string {
	if d == PostgreSQL {
		return `TEXT COLLATE "C"`
	}
	return "TEXT"
}

func (d Dialect) timestampType() string {
	if d == PostgreSQL {
		return "TIMESTAMPTZ"
	}
	return "TEXT"
}
