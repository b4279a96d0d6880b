package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"

	"github.com/agentcontract/tool"
)

// event is one line of the transcript. The text form and the -json form
// print the same events; the JSON form keeps every field, the text form
// picks the ones a reader needs.
type event struct {
	Turn int    `json:"turn,omitempty"`
	Kind string `json:"event"`
	Tool string `json:"tool,omitempty"`
	// Arguments is the argument text exactly as the model wrote it; a
	// pointer, so that empty argument text still appears in JSON.
	Arguments *string `json:"arguments,omitempty"`
	// Text is the event's message: a rejection or failure message, what
	// the model sees, a log line.
	Text           string              `json:"text,omitempty"`
	FailureKind    tool.FailureKind    `json:"failure_kind,omitempty"`
	IdempotencyKey tool.IdempotencyKey `json:"idempotency_key,omitempty"`
	File           string              `json:"file,omitempty"`
	Bytes          int                 `json:"bytes,omitempty"`
	Progress       *tool.Progress      `json:"progress,omitempty"`
	Prompt         json.RawMessage     `json:"prompt,omitempty"`
	Answer         json.RawMessage     `json:"answer,omitempty"`
	Tools          []string            `json:"tools,omitempty"`
}

// The kinds of event, in the order a call meets them.
const (
	evTools          = "tools"              // the definitions advertised to the model
	evProposed       = "proposed"           // the model proposed a call
	evUnknownTool    = "unknown_tool"       // no tool has that name
	evRejected       = "rejected"           // the arguments were refused (InputRejection)
	evPolicy         = "policy"             // the Guard's authorizer decided
	evProgress       = "progress"           // the tool reported progress
	evCompleted      = "completed"          // the call returned an Output
	evFailure        = "failure"            // the call ended in a Failure
	evPrivate        = "private"            // a cause kept out of the model's sight
	evError          = "error"              // the call's outcome is unknown
	evSuspended      = "suspended"          // the call returned an InputRequest
	evCheckpoint     = "checkpoint_written" // the sealed checkpoint went to disk
	evRestart        = "restart"            // the registry and dispatcher were dropped
	evCheckpointRead = "checkpoint_loaded"  // the checkpoint came back from disk, its seal verified
	evAnswered       = "answered"           // the approver answered
	evToModel        = "to_model"           // what the model sees as the tool result
	evReplayRefused  = "replay_refused"     // the checkpoint was sent again and refused
	evLedger         = "ledger"             // the payments system's final state
	evDone           = "done"               // the script is complete
)

// transcript writes events as text or as JSON lines. It is safe for
// concurrent use, because a progress reporter may be called from several
// goroutines of one call. The first write error sticks and is returned by
// err.
type transcript struct {
	mu       sync.Mutex
	w        io.Writer
	jsonMode bool
	failed   error
}

func (t *transcript) emit(e event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.failed != nil {
		return
	}
	var line string
	if t.jsonMode {
		b, err := json.Marshal(e)
		if err != nil {
			t.failed = err
			return
		}
		line = string(b) + "\n"
	} else {
		line = e.text()
	}
	if _, err := io.WriteString(t.w, line); err != nil {
		t.failed = err
	}
}

func (t *transcript) err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.failed
}

// text renders an event for a person; the result ends in a newline.
func (e event) text() string {
	const indent = "    "
	switch e.Kind {
	case evTools:
		return fmt.Sprintf("runtime: %d tools advertised to the model: %s\n", len(e.Tools), strings.Join(e.Tools, ", "))
	case evProposed:
		return fmt.Sprintf("\nturn %d: model proposes %s %s\n", e.Turn, e.Tool, *e.Arguments)
	case evUnknownTool:
		return fmt.Sprintf("%sunknown tool %q: nothing ran\n", indent, e.Tool)
	case evRejected:
		return fmt.Sprintf("%srejected: InputRejection, its public message goes back to the model\n", indent)
	case evPolicy:
		return fmt.Sprintf("%s%s\n", indent, e.Text)
	case evProgress:
		return fmt.Sprintf("%sprogress %s\n", indent, progressBar(*e.Progress))
	case evCompleted:
		return fmt.Sprintf("%sran %s with idempotency key %s: completed\n", indent, e.Tool, e.IdempotencyKey)
	case evFailure:
		return fmt.Sprintf("%sran %s with idempotency key %s: Failure of kind %q, its public output goes to the model\n", indent, e.Tool, e.IdempotencyKey, e.FailureKind)
	case evPrivate:
		return fmt.Sprintf("%slog only, never sent to the model: %s\n", indent, e.Text)
	case evError:
		return fmt.Sprintf("%sran %s: error, outcome unknown: %s\n", indent, e.Tool, e.Text)
	case evSuspended:
		return fmt.Sprintf("%sran %s with idempotency key %s: suspended, asks for input: %s\n", indent, e.Tool, e.IdempotencyKey, e.Prompt)
	case evCheckpoint:
		return fmt.Sprintf("%scheckpoint written: %s (%d bytes)\n", indent, e.File, e.Bytes)
	case evRestart:
		return fmt.Sprintf("%s%s\n", indent, e.Text)
	case evCheckpointRead:
		return fmt.Sprintf("%scheckpoint loaded: %s, seal verified, call to %s with key %s\n", indent, e.File, e.Tool, e.IdempotencyKey)
	case evAnswered:
		return fmt.Sprintf("%sapprover answers %s (%s)\n", indent, e.Answer, e.Text)
	case evReplayRefused:
		return fmt.Sprintf("%scheckpoint %s sent again with answer %s: refused (%s), nothing ran\n", indent, e.File, e.Answer, e.Text)
	case evToModel:
		// Later lines of a multi-line text line up under the first.
		return fmt.Sprintf("%smodel sees: %s\n", indent, strings.ReplaceAll(e.Text, "\n", "\n"+indent+"            "))
	case evLedger:
		return fmt.Sprintf("\nledger: %s\n", e.Text)
	case evDone:
		return fmt.Sprintf("%s\n", e.Text)
	default:
		return fmt.Sprintf("%s%s: %s\n", indent, e.Kind, e.Text)
	}
}

// progressBar draws progress as a bar of 20 cells, a percentage and the
// message; without a known total it prints the count alone.
func progressBar(p tool.Progress) string {
	const width = 20
	if p.Total == 0 {
		return strings.TrimSpace(fmt.Sprintf("[%s] %g %s", strings.Repeat("?", width), p.Completed, p.Message))
	}
	filled := int(math.Round(width * p.Completed / p.Total))
	bar := strings.Repeat("#", filled) + strings.Repeat(".", width-filled)
	return strings.TrimSpace(fmt.Sprintf("[%s] %3.0f%% %s", bar, 100*p.Completed/p.Total, p.Message))
}
