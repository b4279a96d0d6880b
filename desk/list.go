package desk

import (
	"net/http"
	"strconv"

	"github.com/agentcontract/tool/dispatch"
)

// maxListScan bounds how many pending calls one list page reads from the
// store, in pages of the store's own, looking for calls the person may
// see: beyond it, the page shows what it found and links to the rest.
const maxListScan = 10

// list serves the pending calls the person may see, newest first, a page
// at a time: ?from=N starts at the store's N-th pending call. Each call
// is shown from the store's summary, bounded whatever the model wrote.
func (d *Desk) list(w http.ResponseWriter, r *http.Request) {
	person, ok := d.who(w, r)
	if !ok {
		return
	}
	from, err := strconv.Atoi(r.URL.Query().Get("from"))
	if err != nil || from < 0 {
		from = 0
	}
	from = min(from, 1<<30)
	pg := page{Title: d.title, Person: person, List: true, From: from}
	now := d.clock()
	offset, known := from, false // known: a call stands at pg.Next
scan:
	for range maxListScan {
		ps, err := d.store.Pending(r.Context(), dispatch.PendingQuery{NewestFirst: true, Offset: offset, Limit: d.pageSize})
		if err != nil {
			d.storeFailed(w, r, err)
			return
		}
		for k, p := range ps {
			if len(pg.Calls) == d.pageSize {
				pg.Next, known = offset+k, true
				break scan
			}
			if see, may := d.access(r.Context(), person, p); see {
				pg.Calls = append(pg.Calls, summaryView(p, now, may))
			}
		}
		offset += len(ps)
		if len(ps) < d.pageSize {
			pg.Next = 0 // the store has no more
			break
		}
		pg.Next = offset
	}
	if pg.Next > 0 && !known {
		// Whether a call follows what this page read.
		ps, err := d.store.Pending(r.Context(), dispatch.PendingQuery{NewestFirst: true, Offset: pg.Next, Limit: 1})
		if err != nil {
			d.storeFailed(w, r, err)
			return
		}
		if len(ps) == 0 {
			pg.Next = 0
		}
	}
	pg.First = from > 0
	d.render(w, http.StatusOK, pg)
}
