// Package sqlstore keeps the claims, outcomes and waiting turns of
// package dispatch in a SQL database, through database/sql: a
// [dispatch.Store] that the replicas of a runtime share, so that a
// suspended call is answered once, whichever replica the answer reaches.
//
// # Use
//
//	db, err := sql.Open("pgx", dsn) // the program imports the driver
//	store, err := sqlstore.New(db, sqlstore.Config{Dialect: sqlstore.PostgreSQL})
//	err = store.Migrate(ctx) // at every start, on every replica
//	dispatcher, err := dispatch.New(dispatch.Config{Registry: reg, Store: store, SealKeys: keys})
//
// The module imports no driver: the program opens the *sql.DB with the
// driver it chose, and names its [Dialect] ([PostgreSQL] or [SQLite]) in
// the [Config]. A PostgreSQL program compiles no SQLite.
//
// # Claims across replicas
//
// A claim is one INSERT … ON CONFLICT DO NOTHING on the checkpoint's ID,
// the primary key of the claims table: of all the claims of one ID made
// at once, through any number of connections and processes, the database
// inserts exactly one, and every other finds it and compares answers. On
// PostgreSQL the INSERT is committed as a transaction of its own, so that
// a claim whose ctx ended while it waited for a lock is rolled back, not
// recorded after its caller was told it failed. An outcome is recorded by
// one UPDATE of a claim that has none, so a recorded outcome is never
// replaced.
//
// # Failing closed
//
// Every error of the database, and a ctx that ended, is an error wrapping
// [dispatch.ErrStore] (with the driver's or ctx's error beside it), and
// the resume that met it runs nothing. The store deletes claims and turns
// only in [Store.DeleteExpired], only those that expired more than
// [dispatch.MaxClockSkew] before the time it is given; it evicts nothing
// to make room. A record larger than [Config].MaxRecordBytes is refused
// with [dispatch.ErrInvalidRecord].
//
// # What is stored
//
// What package dispatch allows a Store to persist, and nothing else: a
// claim as the JSON of [dispatch.Claim] (checkpoint ID, call ID, tool,
// idempotency key, principal, answer digest, times), its outcome as the
// JSON of [dispatch.SavedOutcome] (public output, error class, the sealed
// checkpoint of a call that suspended again), and each saved turn as its
// times and the JSON of its outcomes. No answer and no private error is
// stored.
//
// # Schema and migrations
//
// The schema carries its version in a table (tool_schema_version, with
// the default prefix). [Store.Migrate] applies the migrations the
// database lacks, once, even when replicas start together, and refuses a
// database whose schema is newer than [SchemaVersion]. [Migrations]
// returns the SQL for review or to apply by hand.
//
// # Retention
//
// Call [Store.DeleteExpired] from time to time (every few minutes, from
// one replica or all): expired claims and turns are deleted, nothing else.
package sqlstore
