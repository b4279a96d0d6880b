// Package sqlstore keeps the claims, call records, outcomes and waiting
// turns of package dispatch in a SQL database, through database/sql: a
// [dispatch.Store] that the replicas of a runtime share, so that a
// suspended call is answered once, whichever replica the answer reaches,
// and a call run under an idempotency key has its effect once, whichever
// replica runs it (see "Exactly once" in package dispatch).
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
// recorded after its caller was told it failed. The record of a call
// whose tool starts at once (a call Run runs, a resumed call) is inserted
// running, with its lease: its intent and its start in one statement.
//
// # The record's life
//
// After its claim, a call record moves by steps ([dispatch.Step]: the
// call started under a lease, the lease renewed, the call run again,
// finished, or recorded unknown), each decided by [dispatch.Claim.Apply]
// and written by [Store.Advance] (or [Store.Finish], which finishes the
// record at whatever version it is) as one UPDATE where the row is still
// at the version the step was decided on: of the steps decided on one
// version, in any number of processes, one lands and the others get
// [dispatch.ErrConflict]. A recorded outcome is never replaced, except
// the unknown outcome of a record in [dispatch.StateUnknown], which only
// its next attempt or its reconciliation moves on, by the same compare
// and set. A write
// whose result the store cannot tell (a lost reply, a failed COMMIT, a
// statement that database/sql ran again) is resolved before Advance
// answers, by reading the record back: what it returns is what the
// database holds.
//
// # Stranded calls
//
// A process that dies while it runs a call leaves its record claimed or
// running under a lease nobody renews. [Store.Stranded] lists the
// records whose lease ended before the time it is given (and the records
// of schema version 1 without an outcome, which had no lease): what an
// operator looks at, and what a resend of the same answer recovers. It is
// one query on an index of the records not finished, ordered as it
// lists them, which holds each one's lease end; it reads the JSON of the
// records it returns only.
//
// # Turns
//
// A turn is saved at a version ([dispatch.Turn].Version): [Store.SaveTurn]
// writes it only where the stored turn is at the version the save was
// decided on, so two processes that each change a call of one turn never
// undo each other's change; the second gets [dispatch.ErrConflict].
// [Store.WaitTurn] waits for a turn's next version by looking: a database
// cannot tell a process of another's save in a way every driver shares,
// so the wait reads the turn's version (one row, by its primary key) every
// [Config].WaitInterval, 100 milliseconds unless configured. [Store.Pending]
// lists the calls of saved turns that wait for a person from the summary
// columns SaveTurn writes ([dispatch.NewPending]), so that a page of the
// list reads no call's whole outcome; [dispatch.PendingQuery].Full reads
// them.
//
// # Scope event logs
//
// The Store is a [dispatch.EventStore] too: the log of each scope that
// the scope rules of a Dispatcher read (dispatch.Config.Rules), in tables
// of its own. A scope has a row that is the lock of its decisions:
// [Store.ReserveEvent] runs in one transaction that first upserts that
// row (INSERT … ON CONFLICT DO UPDATE, which holds its lock until the
// transaction ends, as SELECT … FOR UPDATE would, and makes it when the
// scope has none), then runs the decision, whose queries read the
// scope's events, and inserts the call's event. On PostgreSQL a decision
// of the same scope on another replica waits at its upsert and then sees
// that event; other scopes do not wait. On SQLite the transaction is
// BEGIN IMMEDIATE, which takes the database's one write lock. So of the
// calls decided at the same moment in one scope, none takes a place
// another took, whatever the number of replicas.
//
// A decision reads the events of its rule's tools in its window, through
// an index on (scope, tool, at), never the whole log; the members it adds
// up or compares are read from those events' arguments by
// [dispatch.Event]'s Number and Text, as every store reads them, so that
// a limit counts the same on each dialect and in memory. Its cost grows
// with the events of those tools in the window. [Store.DeleteExpiredEvents]
// deletes the events kept until before the time it is given, and the
// rows of the scopes left without events.
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
// idempotency key, principal, answer digest, times, state, version,
// attempt, lease), its outcome as the JSON of [dispatch.SavedOutcome]
// (public output, error class, the sealed checkpoint of a call that
// suspended again), and each saved turn as its times, its version and the
// JSON of its outcomes, with the summary of each pending call (call ID,
// tool, principal, prompt, times, each text cut as dispatch.NewPending
// cuts it). No answer and no private error is stored, unless the runtime
// asks for the answer ([dispatch.Claim].Response).
//
// # Schema and migrations
//
// The schema carries its version in a table (tool_schema_version, with
// the default prefix). [Store.Migrate] applies the migrations the
// database lacks, once, even when replicas start together, and refuses a
// database whose schema is newer than [SchemaVersion]. [Migrations]
// returns the SQL for review or to apply by hand.
//
// Version 2 adds the record's state, version and lease end to the claims
// (and the index Stranded reads), the version to the turns, and the
// summary columns to the turns' outcomes. Rows written by version 1 keep
// working without being rewritten: a claim without a state reads as it
// always did (finished with an outcome; running, with a lease long
// ended, without one) at version 0, and its next step gives it a state
// and a version; a turn is at version 1; an outcome without summary
// columns has its summary made from its JSON. Stop the processes of the
// previous release before Migrate: one still running writes claims
// without a state, which read as stranded at once, and saves turns
// without moving their version (a release refuses a newer schema when it
// migrates, not while it runs).
//
// Version 3 adds the scopes' event logs: the tables of the scopes and of
// their events, which no earlier version had.
//
// # Retention
//
// Call [Store.DeleteExpired] from time to time (every few minutes, from
// one replica or all): expired claims and turns are deleted, nothing else.
// Scope events have their own: [Store.DeleteExpiredEvents].
package sqlstore
